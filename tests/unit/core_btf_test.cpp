// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// The kernel's BTF read in pieces (core_btf.hpp) answers as the whole of it, parsed by libbpf
// (Btf), does: the reference kernels' files.
#include "reference_data.hpp"
#include "scratch.hpp"
#include "tpkit/kernel/btf.hpp"
#include "tpkit/kernel/core_btf.hpp"
#include "tpkit/support/error.hpp"

#include <gtest/gtest.h>

#include <linux/btf.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;

namespace {

using tpkit::test::data_dir;

// The reference kernel's BTF, as /sys/kernel/btf/vmlinux holds it (raw, not gzipped).
fs::path raw_btf(const std::string& kernel)
{
    fs::path path = tpkit::test::scratch_dir("core-btf-test") / ("vmlinux-" + kernel);
    if (!fs::exists(path)) {
        gzFile in = gzopen((data_dir / "btf" / ("linux-" + kernel + ".btf.gz")).c_str(), "rb");
        std::ofstream out(path, std::ios::binary);
        char buf[1 << 16];
        int n;
        while ((n = gzread(in, buf, sizeof(buf))) > 0)
            out.write(buf, n);
        gzclose(in);
    }
    return path;
}

class CoreBtfKernels : public testing::TestWithParam<std::string> {};

} // namespace

TEST_P(CoreBtfKernels, EnumValuesAreTheWholeBtfsOnes)
{
    auto whole = tpkit::Btf::load(data_dir / "btf" / ("linux-" + GetParam() + ".btf.gz"));
    for (const char* name : {"skb_drop_reason", "req_flag_bits", "zone_stat_item", "no_such_enum"})
        EXPECT_EQ(tpkit::kernel_enum_values(name, raw_btf(GetParam())), whole.enum_values(name)) << name;
}

TEST_P(CoreBtfKernels, TypesFoundAsTheWholeBtfFindsThem)
{
    auto whole = tpkit::Btf::load(data_dir / "btf" / ("linux-" + GetParam() + ".btf.gz"));
    // block_io_start came with 6.5: 6.1 has it not, 6.12 and 6.18 have it.
    for (const char* event : {"sched_switch", "block_io_start", "kfree_skb", "no_such_event"}) {
        std::string name = std::string("btf_trace_") + event;
        EXPECT_EQ(tpkit::kernel_btf_has_type(name, BTF_KIND_TYPEDEF, raw_btf(GetParam())),
                  whole.typedef_proto_params(name).has_value())
            << name;
    }
    EXPECT_TRUE(tpkit::kernel_btf_has_type("task_struct", BTF_KIND_STRUCT, raw_btf(GetParam())));
    EXPECT_FALSE(tpkit::kernel_btf_has_type("task_struct", BTF_KIND_UNION, raw_btf(GetParam())));
}

INSTANTIATE_TEST_SUITE_P(ReferenceKernels, CoreBtfKernels, testing::Values("6.1", "6.12", "6.18"));

TEST(CoreBtf, AFileThatIsNoBtfIsUnknownTarget)
{
    fs::path text = tpkit::test::scratch_dir("core-btf-test") / "not-btf";
    std::ofstream(text) << "not BTF at all, but long enough to hold a header\n";
    for (const fs::path& file : {text, fs::path("/nonexistent/vmlinux")}) {
        try {
            tpkit::kernel_btf_has_type("task_struct", BTF_KIND_STRUCT, file);
            ADD_FAILURE() << file << " was read as BTF";
        } catch (const tpkit::Error& e) {
            EXPECT_EQ(e.code(), tpkit::Exit::unknown_target) << e.what();
        }
    }
}

// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tpgen over the reference kernels' format files and BTF: goldens of representative events,
// every event of each reference kernel compiled for BPF, the committed headers kept fresh, and
// errors.
#include "reference_data.hpp"
#include "tpkit/kernel/btf.hpp"
#include "tpkit/support/error.hpp"
#include "tpgen/tpgen.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <sstream>

namespace fs = std::filesystem;
using namespace tpkit;
using tpgen::Flavour;
using tpgen::FormatSet;

namespace {

using tpkit::test::data_dir;
using tpkit::test::events_of_6_1;
using tpkit::test::events_of_6_12;
using tpkit::test::events_of_6_18;
using tpkit::test::slurp;
const fs::path repo_root = data_dir.parent_path().parent_path();
const fs::path tp_dir = repo_root / "bpf/include/tpkit/tp";

const char* refresh_hint = "refresh with: TPKIT_UPDATE_GOLDEN=1 tests/tpkit_unit_tests "
                           "--gtest_filter='Tpgen*' (from the build directory)";

bool updating() { return std::getenv("TPKIT_UPDATE_GOLDEN") != nullptr; }

const FormatSet& formats(const std::string& kernel)
{
    static std::map<std::string, std::unique_ptr<FormatSet>> cache;
    auto& slot = cache[kernel];
    if (!slot)
        slot = std::make_unique<FormatSet>(
            FormatSet::open(fs::path(TPKIT_FORMATS_DIR) / ("linux-" + kernel)));
    return *slot;
}

const Btf& kernel_btf(const std::string& kernel)
{
    static std::map<std::string, std::unique_ptr<Btf>> cache;
    auto& slot = cache[kernel];
    if (!slot)
        slot = std::make_unique<Btf>(Btf::load(data_dir / "btf" / ("linux-" + kernel + ".btf.gz")));
    return *slot;
}

Flavour kernel(const std::string& version, std::string name = std::string(tpgen::default_flavour))
{
    return {std::move(name), &formats(version), &kernel_btf(version)};
}

std::vector<Flavour> reference_flavours() { return {kernel("6.1", "v6_1"), kernel("6.18", "v6_18")}; }

std::vector<TracepointName> names(const std::vector<std::string>& patterns, const Flavour& f)
{
    return tpgen::expand(patterns, {f.formats});
}

// Compares with a committed file (or rewrites it when refreshing); on a difference names the
// first differing line rather than dumping both texts.
void expect_file(const fs::path& file, const std::string& text)
{
    if (updating()) {
        std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
        return;
    }
    ASSERT_TRUE(fs::exists(file)) << file << " missing; " << refresh_hint;
    std::string want = slurp(file);
    if (want == text)
        return;
    std::istringstream a(want), b(text);
    std::string la, lb;
    int line = 0;
    while (true) {
        bool more_a = static_cast<bool>(std::getline(a, la));
        bool more_b = static_cast<bool>(std::getline(b, lb));
        ++line;
        if (la != lb || more_a != more_b)
            break;
    }
    ADD_FAILURE() << file << " is stale at line " << line << ":\n  committed: " << la
                  << "\n  generated: " << lb << "\n"
                  << refresh_hint;
}

// This process's scratch directory, removed at exit.
fs::path scratch_dir()
{
    struct Scratch {
        fs::path dir = fs::temp_directory_path() / ("tpgen-test-" + std::to_string(getpid()));
        ~Scratch()
        {
            std::error_code ec;
            fs::remove_all(dir, ec);
        }
    };
    static Scratch scratch;
    fs::create_directories(scratch.dir);
    return scratch.dir;
}

// A call of every getter of a header, so that clang generates (and checks) their code.
std::string use_every_getter(const std::string& header)
{
    static const std::regex getter(
        R"(^static __always_inline (.*?)\b(tpkit_\w+)\((void \*ctx|struct bpf_raw_tracepoint_args \*ctx)(, (char|void) \*dst, __u32 size)?\))");
    std::string calls;
    std::istringstream in(header);
    std::string line, prev;
    while (std::getline(in, line)) {
        std::string joined = line.rfind("tpkit_", 0) == 0 ? prev + " " + line : line; // raw: two lines
        std::smatch m;
        if (std::regex_search(joined, m, getter)) {
            std::string ret = m[1], name = m[2];
            if (m[4].matched)
                calls += "\tsink += " + name + "(ctx, buf, sizeof(buf));\n";
            else if (ret.find("tpkit_tp_loc") != std::string::npos)
                calls += "\tsink += " + name + "(ctx).offset;\n";
            else if (ret.find("raw_args") != std::string::npos)
                calls += "\tsink += (__u64)" + name + "(ctx).__first_arg__;\n";
            else
                calls += "\tsink += (__u64)" + name + "(ctx);\n";
        }
        prev = line;
    }
    return calls;
}

// Compiles HEADER for the BPF target, alone or after vmlinux.h, with every getter used when
// INSTANTIATE; returns clang's diagnostics ("" when it compiled).
std::string compile(const std::string& header, bool after_vmlinux, bool instantiate,
                    const std::string& tag)
{
    fs::path dir = scratch_dir();
    fs::path h = dir / (tag + ".h"), c = dir / (tag + ".c"), log = dir / (tag + ".log");
    std::ofstream(h) << header;
    std::string src = after_vmlinux ? "#include \"vmlinux.h\"\n" : "";
    src += "#include \"" + h.string() + "\"\n";
    src += "char LICENSE[] __attribute__((section(\"license\"), used)) = \"GPL\";\n";
    if (instantiate) {
        std::string calls = use_every_getter(header);
        // Raw accessors return a struct: use its first member.
        std::regex first_arg(R"(\(ctx\)\.__first_arg__)");
        std::string with_members;
        std::smatch m;
        std::string rest = calls;
        static const std::regex raw_call(R"((tpkit_(\w+)_raw_args)\(ctx\)\.__first_arg__)");
        while (std::regex_search(rest, m, raw_call)) {
            std::string struct_body = header.substr(header.find("struct " + m[1].str() + " {"));
            std::smatch member;
            std::regex_search(struct_body, member, std::regex(R"(\n\t[^\n]*?(\w+);)"));
            with_members += m.prefix().str() + m[1].str() + "(ctx)." + member[1].str();
            rest = m.suffix();
        }
        calls = with_members + rest;
        src += "volatile __u64 sink;\nchar buf[64];\n"
               "__attribute__((section(\"tracepoint/any/any\"), used)) int use(void *ctx)\n{\n" +
               calls + "\treturn 0;\n}\n";
    }
    std::ofstream(c) << src;
    std::string cmd = std::string(TPKIT_BPF_CLANG) + " -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Werror -Werror=undef -I" +
                      (repo_root / "vmlinux").string() + " -I" + (repo_root / "bpf/include").string() +
                      " -c " + c.string() + " -o " + (dir / (tag + ".o")).string() + " > " +
                      log.string() + " 2>&1";
    int rc = std::system(cmd.c_str());
    std::string out = rc == 0 ? "" : "clang failed (" + cmd + "):\n" + slurp(log).substr(0, 4000);
    return out;
}

struct Golden {
    std::string file;
    std::vector<Flavour> flavours;
    std::vector<std::string> events;
    bool raw = false;
};

std::vector<Golden> goldens()
{
    return {
        {"sched_process_fork-6.1.h", {kernel("6.1")}, {"sched:sched_process_fork"}},
        {"sched_process_fork-6.18.h", {kernel("6.18")}, {"sched:sched_process_fork"}},
        {"sched_process_fork-flavoured.h", reference_flavours(), {"sched:sched_process_fork"}},
        {"netif-6.18.h", {kernel("6.18")}, {"net:netif_receive_skb", "net:netif_rx"}},
        {"sys_enter_openat-6.18.h", {kernel("6.18")}, {"syscalls:sys_enter_openat"}},
        {"ext4_es_cache_extent-6.1.h", {kernel("6.1")}, {"ext4:ext4_es_cache_extent"}},
        {"xfs_agfl_free_deferred-6.18.h", {kernel("6.18")}, {"xfs:xfs_agfl_free_deferred"}},
        {"tcp_probe-6.18.h", {kernel("6.18")}, {"tcp:tcp_probe"}},
        {"sched_process_fork-raw-6.18.h", {kernel("6.18")}, {"sched:sched_process_fork"}, true},
        {"sched_process_fork-6.12.h", {kernel("6.12")}, {"sched:sched_process_fork"}},
    };
}

std::string generate(const Golden& g)
{
    auto events = tpgen::expand(g.events, {g.flavours.front().formats});
    return g.raw ? tpgen::generate_raw_header(g.flavours.front(), events)
                 : tpgen::generate_header(g.flavours, events);
}

// Text of one struct block ("struct NAME {" up to its closing line).
std::string struct_block(const std::string& header, const std::string& name)
{
    auto start = header.find("struct " + name + " {");
    if (start == std::string::npos)
        return "";
    return header.substr(start, header.find("\n}", start) - start + 40);
}

} // namespace

TEST(TpgenGolden, RepresentativeEventsMatchTheirGoldens)
{
    for (const auto& g : goldens()) {
        SCOPED_TRACE(g.file);
        expect_file(data_dir / "golden/tpgen" / g.file, generate(g));
    }
}

TEST(TpgenGolden, GoldensCompileForBpfAloneAndAfterVmlinuxWithEveryGetterUsed)
{
    for (const auto& g : goldens()) {
        std::string header = generate(g);
        std::string tag = fs::path(g.file).stem().string();
        EXPECT_EQ(compile(header, true, true, tag + "-vmlinux"), "") << g.file;
        if (!g.raw) {
            EXPECT_EQ(compile(header, false, true, tag + "-alone"), "") << g.file;
        }
    }
}

TEST(TpgenRecords, ForkCommMovesFromArrayToDataLocAndTheGetterChoosesAtLoadTime)
{
    std::string h = generate(goldens()[2]);
    std::string v61 = struct_block(h, "trace_event_raw_sched_process_fork___v6_1");
    std::string v618 = struct_block(h, "trace_event_raw_sched_process_fork___v6_18");
    EXPECT_NE(v61.find("\tchar parent_comm[16];"), std::string::npos) << v61;
    EXPECT_NE(v61.find("preserve_access_index"), std::string::npos);
    EXPECT_NE(v618.find("\t__u32 __data_loc_parent_comm;"), std::string::npos) << v618;
    EXPECT_NE(h.find("offsetof(struct trace_event_raw_sched_process_fork___v6_1, child_pid) == 44"),
              std::string::npos);
    EXPECT_NE(h.find("offsetof(struct trace_event_raw_sched_process_fork___v6_18, child_pid) == 20"),
              std::string::npos);
    auto getter = h.substr(h.find("tpkit_sched_process_fork_parent_comm(void *ctx, char *dst, __u32 size)"));
    getter = getter.substr(0, getter.find("\n}\n"));
    EXPECT_NE(getter.find("bpf_core_field_exists(v6_1->parent_comm)"), std::string::npos) << getter;
    EXPECT_NE(getter.find("bpf_core_field_exists(v6_18->__data_loc_parent_comm)"), std::string::npos);
    EXPECT_NE(getter.find("(char *)ctx + (loc & 0xFFFF)"), std::string::npos);
    // child_pid only moved: one relocated read serves both kernels.
    EXPECT_NE(h.find("static __always_inline __s32 tpkit_sched_process_fork_child_pid(void *ctx)"),
              std::string::npos);
}

TEST(TpgenRecords, EventsOfAClassShareTheClassStruct)
{
    for (const char* k : {"6.1", "6.12", "6.18"}) {
        for (const char* e : {"netif_receive_skb", "netif_rx", "net_dev_queue"}) {
            auto found = tpgen::find_record_struct(kernel_btf(k), formats(k).read({"net", e}));
            ASSERT_TRUE(found) << k << " " << e;
            EXPECT_EQ(found->name, "trace_event_raw_net_dev_template") << k << " " << e;
        }
        auto fork = tpgen::find_record_struct(kernel_btf(k), formats(k).read({"sched", "sched_process_fork"}));
        ASSERT_TRUE(fork);
        EXPECT_EQ(fork->name, "trace_event_raw_sched_process_fork");
        EXPECT_FALSE(tpgen::find_record_struct(kernel_btf(k), formats(k).read({"syscalls", "sys_enter_read"})));
    }
    std::string h = generate(goldens()[3]);
    EXPECT_EQ(h.find("struct trace_event_raw_net_dev_template___tpkit {"),
              h.rfind("struct trace_event_raw_net_dev_template___tpkit {"));
    EXPECT_NE(h.find("tpkit_netif_rx_len(void *ctx)"), std::string::npos);
    EXPECT_NE(h.find("tpkit_netif_receive_skb_name(void *ctx, char *dst, __u32 size)"), std::string::npos);
}

TEST(TpgenRecords, EventsWithoutBtfStructGetPlainStructsThatSaySo)
{
    std::string h = generate(goldens()[4]);
    std::string block = struct_block(h, "tpkit_sys_enter_openat");
    ASSERT_FALSE(block.empty());
    EXPECT_EQ(block.find("preserve_access_index"), std::string::npos) << block;
    EXPECT_NE(h.find("no BTF struct"), std::string::npos);
    EXPECT_NE(block.find("\t__u8 __pad_12[4];"), std::string::npos) << block;
}

TEST(TpgenRecords, StructFieldsAreStructsOfTheirBytes)
{
    // cxl's events carry a uuid_t (a struct of 16 bytes) in the record: a struct member in the
    // kernel's BTF, declared as a struct so that libbpf relocates it (an array would not match
    // the kernel's struct: the field would read as missing), and read as bytes.
    Flavour k = kernel("6.12");
    std::string h = tpgen::generate_header({k}, {{"cxl", "cxl_generic_event"}});
    std::string block = struct_block(h, "trace_event_raw_cxl_generic_event___tpkit");
    EXPECT_NE(block.find("\tstruct { __u8 bytes[16]; } hdr_uuid; /* uuid_t in the kernel: its bytes */\n"),
              std::string::npos)
        << block;
    EXPECT_NE(block.find("preserve_access_index"), std::string::npos);
    EXPECT_NE(h.find("offsetof(struct trace_event_raw_cxl_generic_event___tpkit, hdr_uuid) == 20"),
              std::string::npos);
    EXPECT_NE(h.find("offsetof(struct trace_event_raw_cxl_generic_event___tpkit, serial) == 40"),
              std::string::npos);
    auto getter = h.substr(h.find("static __always_inline long tpkit_cxl_generic_event_hdr_uuid(void *ctx, "
                                  "void *dst, __u32 size)"));
    getter = getter.substr(0, getter.find("\n}\n"));
    EXPECT_NE(getter.find("bpf_core_field_size(tpkit->hdr_uuid)"), std::string::npos) << getter;
    EXPECT_NE(getter.find("bpf_probe_read_kernel(dst, n, &tpkit->hdr_uuid)"), std::string::npos) << getter;
    EXPECT_EQ(compile(h, true, true, "cxl-vmlinux"), "");
    EXPECT_EQ(compile(h, false, true, "cxl-alone"), "");
}

TEST(TpgenRecords, EveryEventOfEachReferenceKernelCompilesForBpf)
{
    std::map<std::string, std::size_t> expected_events = {
        {"6.1", events_of_6_1}, {"6.12", events_of_6_12}, {"6.18", events_of_6_18}};
    for (const auto& [version, count] : expected_events) {
        Flavour k = kernel(version);
        auto events = names({"*:*"}, k);
        EXPECT_EQ(events.size(), count);
        std::string header = tpgen::generate_header({k}, events);
        std::size_t asserts = 0;
        for (auto p = header.find("_Static_assert(sizeof"); p != std::string::npos;
             p = header.find("_Static_assert(sizeof", p + 1))
            ++asserts;
        EXPECT_GT(asserts, count / 3) << version; // one per struct; classes are shared
        EXPECT_EQ(compile(header, false, false, "all-" + version + "-alone"), "");
        EXPECT_EQ(compile(header, true, false, "all-" + version + "-vmlinux"), "");
    }
}

TEST(TpgenHeaders, CommittedHeadersAreFresh)
{
    std::ifstream list(tp_dir / "headers.list");
    ASSERT_TRUE(list) << tp_dir / "headers.list";
    std::string line;
    int headers = 0;
    while (std::getline(list, line)) {
        if (line.empty() || line[0] == '#')
            continue;
        auto colon = line.find(':');
        ASSERT_NE(colon, std::string::npos) << line;
        std::istringstream head(line.substr(0, colon)), events_text(line.substr(colon + 1));
        std::string file, mode, event;
        head >> file >> mode;
        std::vector<std::string> patterns;
        while (events_text >> event)
            patterns.push_back(event);
        ASSERT_FALSE(patterns.empty()) << line;
        SCOPED_TRACE(file);
        std::string text;
        if (mode == "--raw") {
            Flavour k = kernel("6.18");
            text = tpgen::generate_raw_header(k, names(patterns, k));
        } else {
            ASSERT_TRUE(mode.empty()) << line;
            auto flavours = reference_flavours();
            text = tpgen::generate_header(flavours, tpgen::expand(patterns, {flavours[0].formats,
                                                                             flavours[1].formats}));
        }
        expect_file(tp_dir / file, text);
        ++headers;
    }
    EXPECT_GE(headers, 3);
}

TEST(TpgenInput, TarballsAndDirectoriesHoldTheSameEvents)
{
    FormatSet tar = FormatSet::open(data_dir / "formats/linux-6.1.tar.gz");
    EXPECT_EQ(tar.label(), "linux-6.1");
    EXPECT_EQ(formats("6.1").label(), "linux-6.1");
    auto from_tar = tar.events();
    EXPECT_EQ(from_tar.size(), events_of_6_1);
    EXPECT_EQ(tar.read({"sched", "sched_process_fork"}).id, 308u);

    // 6.12's tarball, made by busybox tar in a VM (tests/kernels/capture-fixtures.sh).
    FormatSet tar612 = FormatSet::open(data_dir / "formats/linux-6.12.tar.gz");
    EXPECT_EQ(tar612.label(), "linux-6.12");
    auto text = [](const std::vector<TracepointName>& events) {
        std::vector<std::string> out;
        for (const auto& e : events)
            out.push_back(e.str());
        return out;
    };
    EXPECT_EQ(text(tar612.events()), text(formats("6.12").events()));
    EXPECT_EQ(tar612.events().size(), events_of_6_12);
    EXPECT_EQ(tar612.read({"sched", "sched_process_fork"}).id, 304u);
}

TEST(TpgenInput, GlobsExpandInOrderOnceEachAndUnknownEventsFail)
{
    auto got = names({"net:netif_rx", "net:netif_r*", "sched:sched_process_f*"}, kernel("6.18"));
    std::vector<std::string> text;
    for (const auto& n : got)
        text.push_back(n.str());
    EXPECT_EQ(text, (std::vector<std::string>{"net:netif_rx", "net:netif_receive_skb",
                                              "net:netif_receive_skb_entry",
                                              "net:netif_receive_skb_exit",
                                              "net:netif_receive_skb_list_entry",
                                              "net:netif_receive_skb_list_exit",
                                              "net:netif_rx_entry", "net:netif_rx_exit",
                                              "sched:sched_process_fork",
                                              "sched:sched_process_free"}));
    try {
        names({"net:no_such_event*"}, kernel("6.18"));
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), Exit::unknown_target);
        EXPECT_NE(std::string(e.what()).find("net:no_such_event*"), std::string::npos);
    }
    EXPECT_THROW(names({"no-colon"}, kernel("6.18")), Error);
}

namespace {

// "CODE message" of an error.
std::string fmt_code(const Error& e)
{
    return std::to_string(static_cast<int>(e.code())) + " " + e.what();
}

// A format set holding one made-up event "tpgen_test:EVENT" with FIELDS after the common ones.
struct FakeEvent {
    fs::path dir;
    std::unique_ptr<FormatSet> set;

    FakeEvent(const std::string& event, const std::string& fields)
    {
        dir = scratch_dir() / ("fake-" + event);
        fs::create_directories(dir / "tpgen_test" / event);
        std::ofstream(dir / "tpgen_test" / event / "format")
            << "name: " << event << "\nID: 9999\nformat:\n"
            << "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
            << "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
            << "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
            << "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
            << fields << "\nprint fmt: \"x\"\n";
        set = std::make_unique<FormatSet>(FormatSet::open(dir));
    }

    std::string generate() const
    {
        Flavour k{"tpkit", set.get(), &kernel_btf("6.18")};
        return tpgen::generate_header({k}, set->events());
    }

    std::string error() const
    {
        try {
            generate();
        } catch (const Error& e) {
            return e.what();
        }
        return "";
    }
};

} // namespace

TEST(TpgenErrors, WhatCannotBeExpressedIsAnErrorNamingEventAndField)
{
    FakeEvent odd("odd_int", "\tfield:u8 pad[3];\toffset:8;\tsize:3;\tsigned:0;\n"
                             "\tfield:int24 weird;\toffset:12;\tsize:3;\tsigned:0;\n");
    EXPECT_EQ(odd.error(), "tpgen_test:odd_int field 'weird': an integer of 3 bytes");

    FakeEvent overlap("overlap", "\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n"
                                 "\tfield:int b;\toffset:10;\tsize:4;\tsigned:1;\n");
    EXPECT_EQ(overlap.error(),
              "tpgen_test:overlap field 'b': overlaps the previous field (offset 10 < 12)");

    FakeEvent ptr("short_ptr", "\tfield:void * p;\toffset:8;\tsize:4;\tsigned:0;\n");
    EXPECT_EQ(ptr.error(), "tpgen_test:short_ptr field 'p': a pointer of 4 bytes");

    // Real kernels: what one getter cannot cover across 6.1 and 6.18.
    auto flavoured_error = [](const TracepointName& event) {
        try {
            tpgen::generate_header(reference_flavours(), {event});
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_EQ(flavoured_error({"dev", "devres_log"}),
              "dev:devres_log field 'name': a scalar on one kernel and an array on another "
              "(v6_1, v6_18)");
    EXPECT_EQ(flavoured_error({"ftrace", "branch"}),
              "ftrace:branch: its layout differs between kernels and, with no BTF struct, cannot "
              "be chosen at load time");

    // A 6.1 record against 6.18's BTF: the layouts differ, and tpgen says so.
    Flavour wrong{"v6_1", &formats("6.1"), &kernel_btf("6.18")};
    try {
        tpgen::generate_header({wrong}, {{"sched", "sched_process_fork"}});
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("sched:sched_process_fork"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("does not match"), std::string::npos) << e.what();
    }
}

TEST(TpgenRecords, RelLocAndPackedFieldsLandAtTheirOffsets)
{
    FakeEvent rel("rel_event", "\tfield:__rel_loc char[] name;\toffset:8;\tsize:4;\tsigned:0;\n"
                               "\tfield:u64 odd;\toffset:12;\tsize:8;\tsigned:0;\n"
                               "\tfield:__data_loc u8[] blob;\toffset:20;\tsize:4;\tsigned:0;\n");
    std::string h = rel.generate();
    std::string block = struct_block(h, "tpkit_rel_event");
    EXPECT_NE(block.find("__attribute__((packed))"), std::string::npos) << block;
    EXPECT_NE(h.find("offsetof(struct tpkit_rel_event, odd) == 12"), std::string::npos);
    EXPECT_NE(h.find("sizeof(struct tpkit_rel_event) == 24"), std::string::npos);
    EXPECT_NE(h.find("__builtin_offsetof(struct tpkit_rel_event, __rel_loc_name) + 4 + (loc & 0xFFFF)"),
              std::string::npos)
        << h;
    EXPECT_NE(h.find("long tpkit_rel_event_blob(void *ctx, void *dst, __u32 size)"), std::string::npos);
    EXPECT_NE(h.find("struct tpkit_tp_loc tpkit_rel_event_name_loc(void *ctx)"), std::string::npos);
    EXPECT_EQ(compile(h, false, true, "rel-alone"), "");
}

TEST(TpgenErrors, OffsetPlusSizeThatWrapsIsRejectedWithFileAndLine)
{
    // x ends at 16 + 0xFFFFFFF8, which wraps to 8 in 32 bits: y at 16 would pass as not
    // overlapping it.
    FakeEvent wrap("wrap", "\tfield:u8 x[4294967288];\toffset:16;\tsize:4294967288;\tsigned:0;\n"
                           "\tfield:u32 y;\toffset:16;\tsize:4;\tsigned:0;\n");
    std::string error = wrap.error();
    std::string want = "/tpgen_test/wrap/format:9: field 'x' at offset 16 size 4294967288 ends past "
                       "65536 bytes, beyond any trace record";
    ASSERT_GE(error.size(), want.size()) << error;
    EXPECT_EQ(error.substr(error.size() - want.size()), want) << error;
    EXPECT_EQ(error.substr(0, wrap.dir.string().size()), wrap.dir.string()) << error;
}

TEST(TpgenErrors, FieldNamesCCannotTakeAreRefusedAsUsageErrors)
{
    auto refused = [](const std::string& event, const std::string& fields) {
        FakeEvent fake(event, fields);
        try {
            std::string h = fake.generate();
            return "generated:\n" + h;
        } catch (const Error& e) {
            return fmt_code(e);
        }
    };
    EXPECT_EQ(refused("kw_auto", "\tfield:int auto;\toffset:8;\tsize:4;\tsigned:1;\n"),
              "2 tpgen_test:kw_auto field 'auto': a C keyword");
    EXPECT_EQ(refused("kw_register", "\tfield:unsigned long register;\toffset:8;\tsize:8;\tsigned:0;\n"),
              "2 tpgen_test:kw_register field 'register': a C keyword");
    EXPECT_EQ(refused("kw_default", "\tfield:char default[16];\toffset:8;\tsize:16;\tsigned:1;\n"),
              "2 tpgen_test:kw_default field 'default': a C keyword");
    EXPECT_EQ(refused("kw_int", "\tfield:__data_loc char[] int;\toffset:8;\tsize:4;\tsigned:1;\n"),
              "2 tpgen_test:kw_int field 'int': a C keyword");
    EXPECT_EQ(refused("digit", "\tfield:int 1st;\toffset:8;\tsize:4;\tsigned:1;\n"),
              "2 tpgen_test:digit field '1st': not a C identifier: it starts with a digit");
    EXPECT_EQ(refused("macro", "\tfield:void * NULL;\toffset:8;\tsize:8;\tsigned:0;\n"),
              "2 tpgen_test:macro field 'NULL': a macro of the headers it would be used with");
    EXPECT_EQ(refused("own_macro", "\tfield:int TPKIT_TP_ENOENT;\toffset:8;\tsize:4;\tsigned:1;\n"),
              "2 tpgen_test:own_macro field 'TPKIT_TP_ENOENT': a macro of the headers it would be "
              "used with");
    // Clashes with the members tpgen adds, and between getters.
    EXPECT_EQ(refused("clash_loc", "\tfield:__data_loc char[] x;\toffset:8;\tsize:4;\tsigned:1;\n"
                                   "\tfield:u32 __data_loc_x;\toffset:12;\tsize:4;\tsigned:0;\n"),
              "2 tpgen_test:clash_loc field '__data_loc_x': its struct member __data_loc_x is "
              "already the member of field 'x'");
    EXPECT_EQ(refused("clash_ent", "\tfield:int ent;\toffset:8;\tsize:4;\tsigned:1;\n"),
              "2 tpgen_test:clash_ent field 'ent': its struct member ent is already the member of "
              "the common fields");
    EXPECT_EQ(refused("clash_pad", "\tfield:int __pad_8;\toffset:12;\tsize:4;\tsigned:1;\n"),
              "2 tpgen_test:clash_pad field '__pad_8': its struct member __pad_8 is already the "
              "member of the padding before field '__pad_8'");
    EXPECT_EQ(refused("clash_getter", "\tfield:__data_loc char[] x;\toffset:8;\tsize:4;\tsigned:1;\n"
                                      "\tfield:u32 x_loc;\toffset:12;\tsize:4;\tsigned:0;\n"),
              "2 tpgen_test:clash_getter field 'x_loc': its getter name tpkit_clash_getter_x_loc is "
              "already taken in this header");

    // Names that look risky but are C: the header compiles with every getter used.
    FakeEvent fine("fine_names", "\tfield:int class;\toffset:8;\tsize:4;\tsigned:1;\n"
                                 "\tfield:int new;\toffset:12;\tsize:4;\tsigned:1;\n"
                                 "\tfield:void * ctx;\toffset:16;\tsize:8;\tsigned:0;\n"
                                 "\tfield:char dst[8];\toffset:24;\tsize:8;\tsigned:1;\n"
                                 "\tfield:u32 size;\toffset:32;\tsize:4;\tsigned:0;\n"
                                 "\tfield:__data_loc char[] rec;\toffset:36;\tsize:4;\tsigned:1;\n"
                                 "\tfield:u64 __pad_7;\toffset:48;\tsize:8;\tsigned:0;\n"
                                 "\tfield:u8 _1;\toffset:56;\tsize:1;\tsigned:0;\n");
    std::string h = fine.generate();
    EXPECT_NE(h.find("\t__u8 __pad_40[8];"), std::string::npos) << h;
    EXPECT_EQ(compile(h, false, true, "fine-names-alone"), "");
    EXPECT_EQ(compile(h, true, true, "fine-names-vmlinux"), "");
}

TEST(TpgenErrors, FlavourNamesMustBeUsableAsVariables)
{
    auto error_of = [](const std::string& name) {
        try {
            tpgen::generate_header({kernel("6.18", name)}, {{"sched", "sched_process_fork"}});
        } catch (const Error& e) {
            return fmt_code(e);
        }
        return std::string("no error");
    };
    EXPECT_EQ(error_of("v6_18"), "no error");
    EXPECT_EQ(error_of("int"), "2 bad flavour name 'int': a C keyword");
    EXPECT_EQ(error_of("6_18"), "2 bad flavour name '6_18': not a C identifier: it starts with a digit");
    EXPECT_EQ(error_of("ctx"), "2 bad flavour name 'ctx': a name the getters use themselves");
    EXPECT_EQ(error_of("v6.18"), "2 bad flavour name 'v6.18': not a C identifier");
    try {
        tpgen::generate_header({kernel("6.18", "a"), kernel("6.1", "a")}, {{"sched", "sched_process_fork"}});
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(fmt_code(e), "2 repeated flavour name 'a'");
    }
}

namespace {

// The events of a format set with each one's field declarations: what a tarball and the
// directory it was made from must agree on.
std::string describe(const FormatSet& set)
{
    std::string out;
    for (const auto& name : set.events()) {
        out += name.str() + ":";
        for (const auto& f : set.read(name).fields)
            out += " " + f.type + " " + f.name + "@" + std::to_string(f.offset);
        out += "\n";
    }
    return out;
}

int sh(const std::string& command) { return std::system(command.c_str()); }

} // namespace

TEST(TpgenInput, TarballsAreReadInMemoryInEveryLayout)
{
    ASSERT_EQ(sh("tar --version > /dev/null"), 0) << "the test makes its tarballs with tar";
    fs::path dir = scratch_dir() / "layouts";
    fs::path tree = dir / "tree";
    // Three systems of a reference kernel, and one whose path is longer than tar's 100-byte name
    // field (ustar prefix, GNU long name or pax path, by format).
    fs::create_directories(tree / "events");
    for (const char* system : {"sched", "net", "syscalls"})
        fs::copy(fs::path(TPKIT_FORMATS_DIR) / "linux-6.18" / system, tree / "events" / system,
                 fs::copy_options::recursive);
    std::string long_system(60, 's'), long_event(70, 'e');
    fs::create_directories(tree / "events" / long_system / long_event);
    fs::copy_file(tree / "events/sched/sched_process_fork/format",
                  tree / "events" / long_system / long_event / "format");
    FormatSet from_dir = FormatSet::open(tree);
    std::string want = describe(from_dir);
    ASSERT_NE(want.find(long_system + ":" + long_event + ": "), std::string::npos);
    ASSERT_NE(want.find("sched:sched_process_fork: "), std::string::npos);

    // TMPDIR pointed at an empty directory: reading a tarball must leave nothing in it.
    fs::path tmp = dir / "tmp";
    fs::create_directories(tmp);
    const char* old_tmpdir = std::getenv("TMPDIR");
    std::string saved = old_tmpdir ? old_tmpdir : "";
    setenv("TMPDIR", tmp.c_str(), 1);
    struct Restore {
        std::string saved;
        bool had;
        ~Restore() { had ? setenv("TMPDIR", saved.c_str(), 1) : unsetenv("TMPDIR"); }
    } restore{saved, old_tmpdir != nullptr};

    struct Layout {
        std::string file, tar_args;
    };
    for (const Layout& l : std::vector<Layout>{
             {"gnu.tar.gz", "--format=gnu -czf"},
             {"pax.tar.gz", "--format=pax -czf"},
             {"ustar.tgz", "--format=ustar -czf"},
             {"plain.tar", "--format=gnu -cf"},
         }) {
        SCOPED_TRACE(l.file);
        fs::path file = dir / l.file;
        // With events/ at the top, and without (the systems at the top, as "./sched/...").
        ASSERT_EQ(sh("tar -C " + tree.string() + " " + l.tar_args + " " + file.string() + " events"), 0);
        FormatSet with_events = FormatSet::open(file);
        EXPECT_EQ(with_events.label(), fs::path(l.file).stem().stem().string() == "ustar"
                                           ? "ustar"
                                           : l.file.substr(0, l.file.find('.')));
        EXPECT_EQ(describe(with_events), want);
        fs::path bare = dir / ("bare-" + l.file);
        ASSERT_EQ(sh("tar -C " + (tree / "events").string() + " " + l.tar_args + " " + bare.string() + " ."), 0);
        EXPECT_EQ(describe(FormatSet::open(bare)), want);
        EXPECT_TRUE(fs::is_empty(tmp)) << "something was unpacked into TMPDIR";
    }
}

TEST(TpgenInput, BadTarballsAreOneLineErrorsFromTpgen)
{
    fs::path dir = scratch_dir() / "bad-tarballs";
    fs::create_directories(dir / "tree/sys/ev");
    auto error_of = [](const fs::path& file) {
        try {
            FormatSet set = FormatSet::open(file);
            for (const auto& name : set.events())
                set.read(name);
        } catch (const Error& e) {
            return fmt_code(e);
        }
        return std::string("no error");
    };
    auto write = [](const fs::path& file, const std::string& bytes) {
        std::ofstream(file, std::ios::binary) << bytes;
    };
    fs::path garbage = dir / "garbage.tar.gz";
    write(garbage, "garbage\n");
    EXPECT_EQ(error_of(garbage), "4 cannot read format files from " + garbage.string() + ": not a tar archive");
    fs::path empty = dir / "empty.tar";
    write(empty, "");
    EXPECT_EQ(error_of(empty), "4 cannot read format files from " + empty.string() + ": not a tar archive (empty)");
    fs::path xz = dir / "kernel.tar.xz";
    write(xz, std::string("\xFD" "7zXZ\0", 6) + std::string(600, 'x'));
    EXPECT_EQ(error_of(xz), "4 cannot read format files from " + xz.string() +
                                ": it is compressed with xz: only .tar and .tar.gz are read (unpack "
                                "it and give the directory)");
    fs::path text = dir / "text.tar";
    write(text, std::string(2048, 'x'));
    EXPECT_EQ(error_of(text), "4 cannot read format files from " + text.string() + ": not a tar archive");

    // A real tarball cut short, plain and compressed.
    std::string format = "name: ev\nID: 1\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
                         "\tfield:int x;\toffset:8;\tsize:4;\tsigned:1;\n\nprint fmt: \"\"\n";
    write(dir / "tree/sys/ev/format", format);
    std::string noise(100000, '\0'); // incompressible, so that a cut gzip is cut inside it
    std::uint32_t seed = 1;
    for (char& c : noise)
        c = static_cast<char>((seed = seed * 1103515245 + 12345) >> 24);
    write(dir / "tree/sys/ev/big", noise);
    ASSERT_EQ(sh("tar -C " + (dir / "tree").string() + " -cf " + (dir / "whole.tar").string() + " sys"), 0);
    std::string whole = slurp(dir / "whole.tar");
    fs::path cut = dir / "cut.tar";
    write(cut, whole.substr(0, 50000));
    std::string got = error_of(cut);
    EXPECT_EQ(got.substr(0, got.find(" at byte")),
              "4 cannot read format files from " + cut.string() + ": truncated")
        << got;
    ASSERT_EQ(sh("gzip -c " + (dir / "whole.tar").string() + " | head -c 50000 > " + (dir / "cut.tar.gz").string()), 0);
    got = error_of(dir / "cut.tar.gz");
    EXPECT_EQ(got.substr(0, got.find(':', 35)), "4 cannot read format files from " + (dir / "cut.tar.gz").string())
        << got;
    EXPECT_EQ(got.find('\n'), std::string::npos) << got;

    // A malformed format file inside: TARBALL(MEMBER):LINE.
    write(dir / "tree/sys/ev/format", "name: ev\nID: 1\nformat:\n\tfield:int x;\toffset:zz;\tsize:4;\tsigned:1;\n");
    fs::remove(dir / "tree/sys/ev/big");
    fs::path bad_format = dir / "bad-format.tar";
    ASSERT_EQ(sh("tar -C " + (dir / "tree").string() + " -cf " + bad_format.string() + " sys"), 0);
    EXPECT_EQ(error_of(bad_format), "1 " + bad_format.string() + "(sys/ev/format):4: bad offset 'zz'");

    // A "format" too large to be one.
    write(dir / "tree/sys/ev/format", std::string(2 << 20, 'x'));
    fs::path huge = dir / "huge.tar";
    ASSERT_EQ(sh("tar -C " + (dir / "tree").string() + " -cf " + huge.string() + " sys"), 0);
    EXPECT_EQ(error_of(huge), "4 cannot read format files from " + huge.string() +
                                  ": sys/ev/format is 2097152 bytes, more than a format file's 1 MiB");
}

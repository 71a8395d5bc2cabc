// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tpgen's header generator on any format file, with Linux 6.18's BTF: the input is written as
// fuzz/<its name: line>/format (a directory of one event) and a header generated for it.
#include "tpkit/kernel/btf.hpp"
#include "tpkit/support/error.hpp"
#include "tpgen/tpgen.hpp"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <stdlib.h>

namespace fs = std::filesystem;
using namespace tpkit;

namespace {

const Btf& reference_btf()
{
    static const Btf loaded = Btf::load(std::string(TPKIT_TEST_DATA) + "/btf/linux-6.18.btf.gz");
    return loaded;
}

// A directory of this process's, removed at exit.
struct Scratch {
    fs::path dir;
    Scratch()
    {
        std::string templ = (fs::temp_directory_path() / "tpkit-tpgen-fuzz-XXXXXX").string();
        if (!mkdtemp(templ.data()))
            std::abort();
        dir = templ;
    }
    ~Scratch()
    {
        std::error_code ec;
        fs::remove_all(dir, ec);
    }
};

const fs::path& scratch()
{
    static const Scratch s;
    return s.dir;
}

// The event's name from its "name:" line when it can be a directory name, so that BTF's
// trace_event_raw_<name> is found for real events; "event" otherwise.
std::string event_name(std::string_view text)
{
    if (text.substr(0, 6) != "name: ")
        return "event";
    std::string name(text.substr(6, text.find('\n') - 6));
    bool plain = !name.empty() && name.size() <= 64;
    for (char c : name)
        plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    return plain ? name : "event";
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    std::string_view text(reinterpret_cast<const char*>(data), size);
    const fs::path root = scratch() / "formats";
    std::string name = event_name(text);
    fs::remove_all(root);
    fs::create_directories(root / "fuzz" / name);
    std::ofstream(root / "fuzz" / name / "format", std::ios::binary).write(text.data(), text.size());
    try {
        auto set = tpgen::FormatSet::open(root);
        tpgen::Flavour kernel{std::string(tpgen::default_flavour), &set, &reference_btf()};
        std::string header = tpgen::generate_header({kernel}, tpgen::expand({"fuzz:*"}, {&set}));
        if (header.find(name) == std::string::npos) {
            std::fprintf(stderr, "tpgen fuzz: no %s in the header\n", name.c_str());
            std::abort();
        }
    } catch (const Error&) {
    }
    return 0;
}

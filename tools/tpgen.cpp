// tpgen: C headers of tracepoint contexts for BPF programs, from the kernel's format files.
#include "tpkit/btf.hpp"
#include "tpkit/error.hpp"
#include "tpkit/tpgen.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

using namespace tpkit;

namespace {

struct FlavourSpec {
    std::string name;
    std::string formats;
    std::string btf; // empty: --btf or the running kernel's
};

FlavourSpec parse_flavour(const std::string& text)
{
    auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
        throw Error(Exit::usage, "bad --flavour '" + text + "': expected NAME=FORMATS[,BTF]");
    FlavourSpec spec{text.substr(0, eq), text.substr(eq + 1), ""};
    if (auto comma = spec.formats.find(','); comma != std::string::npos) {
        spec.btf = spec.formats.substr(comma + 1);
        spec.formats.resize(comma);
    }
    return spec;
}

int run(int argc, char** argv)
{
    CLI::App app{"Generate C headers of tracepoint contexts for BPF programs: one struct per event\n"
                 "(CO-RE relocatable through the kernel's BTF) and a getter per field; with --raw,\n"
                 "typed raw tracepoint arguments."};
    std::vector<std::string> patterns;
    std::string formats, btf_file, output;
    std::vector<std::string> flavour_texts;
    bool raw = false;
    app.add_option("events", patterns, "SYSTEM:EVENT, shell globs allowed ('net:*')")->required();
    app.add_option("--formats", formats,
                   "format files: a directory of SYSTEM/EVENT/format or a tarball of one "
                   "(default: live tracefs)");
    app.add_option("--btf", btf_file,
                   "BTF of the kernel the formats come from, raw or gzip "
                   "(default: /sys/kernel/btf/vmlinux)");
    app.add_option("--flavour", flavour_texts,
                   "NAME=FORMATS[,BTF]: one kernel's formats (and BTF); repeat to emit a struct per "
                   "kernel and getters that choose at load time")
        ->allow_extra_args(false);
    app.add_flag("--raw", raw, "emit raw tracepoint argument accessors (needs vmlinux.h)");
    app.add_option("-o,--output", output, "output file (default: stdout)");
    app.footer("EXAMPLES:\n"
               "  tpgen sched:sched_process_fork            # from this kernel's tracefs and BTF\n"
               "  tpgen 'net:netif_*' -o net.h\n"
               "  tpgen --formats linux-6.1.tar.gz --btf linux-6.1.btf.gz 'syscalls:sys_enter_*'\n"
               "  tpgen --flavour v6_1=linux-6.1.tar.gz,linux-6.1.btf.gz \\\n"
               "        --flavour v6_18=linux-6.18.tar.gz,linux-6.18.btf.gz sched:sched_process_fork\n"
               "  tpgen --raw sched:sched_process_fork      # struct task_struct *parent, *child");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    if (!flavour_texts.empty() && !formats.empty())
        throw Error(Exit::usage, "--formats and --flavour do not go together");

    std::vector<std::unique_ptr<tpgen::FormatSet>> sets;
    std::vector<std::unique_ptr<Btf>> btfs;
    std::vector<tpgen::Flavour> flavours;
    auto load_btf = [&](const std::string& file) -> const Btf* {
        if (file.empty()) {
            static std::unique_ptr<Btf> fallback;
            if (!fallback)
                fallback = std::make_unique<Btf>(btf_file.empty() ? Btf::load_vmlinux()
                                                                  : Btf::load(btf_file));
            return fallback.get();
        }
        btfs.push_back(std::make_unique<Btf>(Btf::load(file)));
        return btfs.back().get();
    };
    if (flavour_texts.empty()) {
        sets.push_back(std::make_unique<tpgen::FormatSet>(
            formats.empty() ? tpgen::FormatSet::live() : tpgen::FormatSet::open(formats)));
        flavours.push_back({std::string(tpgen::default_flavour), sets.back().get(), load_btf("")});
    } else {
        for (const auto& text : flavour_texts) {
            FlavourSpec spec = parse_flavour(text);
            sets.push_back(std::make_unique<tpgen::FormatSet>(tpgen::FormatSet::open(spec.formats)));
            flavours.push_back({spec.name, sets.back().get(), load_btf(spec.btf)});
        }
    }
    std::vector<const tpgen::FormatSet*> set_ptrs;
    for (const auto& s : sets)
        set_ptrs.push_back(s.get());
    auto events = tpgen::expand(patterns, set_ptrs);

    std::string header;
    if (raw) {
        if (flavours.size() != 1)
            throw Error(Exit::usage, "--raw reads one kernel's BTF: give --formats/--btf, not --flavour");
        header = tpgen::generate_raw_header(flavours.front(), events);
    } else {
        header = tpgen::generate_header(flavours, events);
    }
    if (output.empty()) {
        std::cout << header;
        std::cout.flush();
    } else {
        std::ofstream out(output, std::ios::binary | std::ios::trunc);
        out << header;
        out.close();
        if (!out)
            throw Error(Exit::failure, "cannot write " + output);
    }
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    try {
        return run(argc, argv);
    } catch (const Error& e) {
        fmt::print(stderr, "tpgen: {}\n", e.what());
        return static_cast<int>(e.code());
    } catch (const std::exception& e) {
        fmt::print(stderr, "tpgen: {}\n", e.what());
        return static_cast<int>(Exit::failure);
    }
}

// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tpgen: C headers of tracepoint contexts for BPF programs, from the kernel's format files.
#include <tpkit/cli/cli.hpp>
#include <tpkit/kernel/btf.hpp>
#include <tpkit/run/tool.hpp>
#include <tpkit/support/error.hpp>
#include "tpgen/tpgen.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <utility>

using namespace tpkit;
namespace fs = std::filesystem;

namespace {

// The running kernel's BTF, or an error that says how tpgen can do without it.
Btf running_kernel_btf()
{
    try {
        return Btf::load_vmlinux();
    } catch (const Error& e) {
        throw Error(e.code(), std::string(e.what()) + "; pass --btf FILE");
    }
}

constexpr const char* examples =
    R"(  tpgen sched:sched_process_fork            # from this kernel's tracefs and BTF
  tpgen 'net:netif_*' -o net.h
  tpgen --formats linux-6.1.tar.gz --btf linux-6.1.btf.gz 'syscalls:sys_enter_*'
  tpgen --flavour v6_1=linux-6.1.tar.gz,linux-6.1.btf.gz \
        --flavour v6_18=linux-6.18.tar.gz,linux-6.18.btf.gz sched:sched_process_fork
  tpgen --raw sched:sched_process_fork      # struct task_struct *parent, *child
)";

struct FlavourSpec {
    std::string name;
    std::string formats;
    std::string btf; // empty: --btf or the running kernel's
};

// Why TEXT is not a --flavour value, or "".
std::string flavour_problem(const std::string& text)
{
    auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
        return "'" + text + "' is not NAME=FORMATS[,BTF]";
    std::string why = tpgen::identifier_problem(text.substr(0, eq));
    if (!why.empty())
        return "bad flavour name '" + text.substr(0, eq) + "': " + why;
    return "";
}

FlavourSpec parse_flavour(const std::string& text)
{
    auto eq = text.find('=');
    FlavourSpec spec{text.substr(0, eq), text.substr(eq + 1), ""};
    if (auto comma = spec.formats.find(','); comma != std::string::npos) {
        spec.btf = spec.formats.substr(comma + 1);
        spec.formats.resize(comma);
    }
    return spec;
}

sigset_t stop_signals()
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    return set;
}

// Writes all of TEXT to FD, waiting while it cannot take more; what names FD in errors.
void write_all(int fd, std::string_view text, const std::string& what)
{
    while (!text.empty()) {
        ssize_t n = ::write(fd, text.data(), text.size());
        if (n >= 0) {
            text.remove_prefix(static_cast<std::size_t>(n));
            continue;
        }
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN) { // a descriptor some other program made non-blocking
            pollfd pfd{fd, POLLOUT, 0};
            poll(&pfd, 1, -1);
            continue;
        }
        if (errno == EPIPE && fd == STDOUT_FILENO)
            throw StdoutClosed{}; // like every tool: its reader went away, a quiet exit
        throw Error(Exit::failure, "cannot write " + what + ": " + std::strerror(errno));
    }
}

// A file that is removed unless kept: -o's temporary until it is renamed into place.
class TempFile {
public:
    explicit TempFile(std::string path) : path_(std::move(path)) {}
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    ~TempFile()
    {
        if (fd_ >= 0)
            close(fd_);
        if (!kept_)
            unlink(path_.c_str());
    }
    int& fd() { return fd_; }
    void keep() { kept_ = true; }

private:
    std::string path_;
    int fd_ = -1;
    bool kept_ = false;
};

// -o FILE: the header is written to a temporary file in FILE's directory and renamed over FILE
// only when all of it is written, so FILE is never left truncated; the temporary is removed on
// any failure. SIGINT/SIGTERM/SIGHUP wait meanwhile, then end tpgen with the temporary removed
// and FILE as it was. Devices and FIFOs (-o /dev/null) are written in place: nothing to rename
// over them.
void write_output_file(fs::path path, std::string_view text)
{
    const std::string name = path.string();
    std::error_code ec;
    if (fs::is_symlink(path, ec))
        path = fs::weakly_canonical(path, ec); // the link stays, its target gets the header
    struct stat st {};
    if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode))
            throw Error(Exit::failure, "cannot write " + name + ": it is a directory");
        int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd < 0)
            throw Error(Exit::failure, "cannot write " + name + ": " + std::strerror(errno));
        struct Closer {
            int fd;
            ~Closer() { close(fd); }
        } closer{fd};
        write_all(fd, text, name);
        return;
    }

    sigset_t stops = stop_signals(), before;
    sigprocmask(SIG_BLOCK, &stops, &before);
    struct Restore {
        sigset_t mask;
        ~Restore() { sigprocmask(SIG_SETMASK, &mask, nullptr); } // a pending stop ends tpgen here
    } restore{before};

    fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
    std::string temp_name = (dir / ("." + path.filename().string() + ".tpgen-XXXXXX")).string();
    int fd = mkostemp(temp_name.data(), O_CLOEXEC);
    if (fd < 0)
        throw Error(Exit::failure, "cannot write " + name + ": cannot create a file in " +
                                       dir.string() + ": " + std::strerror(errno));
    TempFile temp(temp_name);
    temp.fd() = fd;
    // The mode a plain create would give (mkostemp makes 0600).
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    write_all(fd, text, name);
    if (fsync(fd) != 0)
        throw Error(Exit::failure, "cannot write " + name + ": " + std::strerror(errno));
    int closed = close(std::exchange(temp.fd(), -1));
    if (closed != 0)
        throw Error(Exit::failure, "cannot write " + name + ": " + std::strerror(errno));
    sigset_t pending;
    sigpending(&pending);
    for (int sig : {SIGINT, SIGTERM, SIGHUP})
        if (sigismember(&pending, sig) && !sigismember(&before, sig))
            return; // stopped: the temporary goes, FILE stays as it was, the signal ends tpgen
    if (rename(temp_name.c_str(), path.c_str()) != 0)
        throw Error(Exit::failure, "cannot write " + name + ": " + std::strerror(errno));
    temp.keep();
}

} // namespace

int main(int argc, char** argv)
{
    Cli cli("tpgen",
            "Generate C headers of tracepoint contexts for BPF programs: one struct per event\n"
            "(CO-RE relocatable through the kernel's BTF) and a getter per field; with --raw,\n"
            "typed raw tracepoint arguments.",
            examples);
    std::vector<std::string> patterns;
    std::string formats, btf_file, output;
    std::vector<std::string> flavour_texts;
    bool raw = false;
    cli.option("events", patterns, "SYSTEM:EVENT, shell globs allowed ('net:*')").required();
    auto formats_opt = cli.option("--formats", formats,
                                  "format files: a directory of SYSTEM/EVENT/format or a "
                                  ".tar/.tar.gz of one (default: live tracefs)");
    cli.option("--btf", btf_file,
               "BTF of the kernel the formats come from, raw or gzip "
               "(default: /sys/kernel/btf/vmlinux)");
    cli.option("--flavour", flavour_texts,
               "NAME=FORMATS[,BTF]: one kernel's formats (and BTF); repeat to emit a struct per "
               "kernel and getters that choose at load time")
        .allow_extra_args(false)
        .check(flavour_problem, "NAME=FORMATS[,BTF]")
        .excludes(formats_opt);
    cli.flag("--raw", raw, "emit raw tracepoint argument accessors (needs vmlinux.h)");
    cli.option("-o,--output", output,
               "output file, replaced only once the header is complete (default: stdout)");
    if (auto exit = cli.parse(argc, argv))
        return static_cast<int>(*exit);

    return run_tool(cli.name(), [&] {
        // Nothing to detach and no final output: a stop signal ends tpgen at once (it holds no
        // temporary files but -o's, which write_output_file guards).
        sigset_t stops = stop_signals();
        sigprocmask(SIG_UNBLOCK, &stops, nullptr);

        std::vector<std::unique_ptr<tpgen::FormatSet>> sets;
        std::vector<std::unique_ptr<Btf>> btfs;
        std::vector<tpgen::Flavour> flavours;
        std::unique_ptr<Btf> fallback;
        auto load_btf = [&](const std::string& file) -> const Btf* {
            if (file.empty()) {
                if (!fallback)
                    fallback = std::make_unique<Btf>(btf_file.empty() ? running_kernel_btf()
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
            if (raw && flavour_texts.size() != 1)
                throw Error(Exit::usage,
                            "--raw reads one kernel's BTF: give --formats/--btf, not --flavour");
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

        std::string header = raw ? tpgen::generate_raw_header(flavours.front(), events)
                                 : tpgen::generate_header(flavours, events);
        if (output.empty())
            write_all(STDOUT_FILENO, header, "to stdout");
        else
            write_output_file(output, header);
    });
}

// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// Loading BTF: the reference kernels' files, and inputs that are not a kernel's BTF (endless,
// truncated, too large, not BTF at all) refused with one clear error, in bounded time and memory.
#include "reference_data.hpp"
#include "scratch.hpp"
#include "tpkit/kernel/btf.hpp"
#include "tpkit/support/error.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <linux/btf.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;

namespace {

using tpkit::test::data_dir;

fs::path scratch() { return tpkit::test::scratch_dir("btf-test"); }

std::string gunzip(const fs::path& file)
{
    gzFile in = gzopen(file.c_str(), "rb");
    std::string out;
    char buf[1 << 16];
    int n;
    while ((n = gzread(in, buf, sizeof(buf))) > 0)
        out.append(buf, static_cast<std::size_t>(n));
    gzclose(in);
    return out;
}

fs::path write_file(const std::string& name, const std::string& bytes, bool gzip = false)
{
    fs::path path = scratch() / name;
    if (gzip) {
        gzFile out = gzopen(path.c_str(), "wb");
        gzwrite(out, bytes.data(), static_cast<unsigned>(bytes.size()));
        gzclose(out);
    } else {
        std::ofstream(path, std::ios::binary) << bytes;
    }
    return path;
}

#ifdef __SANITIZE_ADDRESS__
// ASan maps terabytes of shadow memory, which no address-space cap leaves room for: its allocator
// refuses any one allocation over 1 GiB instead.
extern "C" const char* __asan_default_options() { return "max_allocation_size_mb=1024"; }
#endif

// Btf::load(FILE) in a child process capped at 1 GiB of address space (under ASan: of any one
// allocation) and 20 seconds, so that an unbounded read fails this test instead of the machine:
// "ok", the Error's message, or how the child ended.
std::string load_in_child(const fs::path& file)
{
    int fds[2];
    if (pipe(fds) != 0)
        return "pipe failed";
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
#ifndef __SANITIZE_ADDRESS__
        rlimit as{1ul << 30, 1ul << 30};
        setrlimit(RLIMIT_AS, &as);
#endif
        alarm(20);
        std::string result;
        int code = 0;
        try {
            tpkit::Btf btf = tpkit::Btf::load(file);
            result = btf.struct_members("trace_entry") ? "ok" : "loaded, without trace_entry";
        } catch (const tpkit::Error& e) {
            result = e.what();
            code = static_cast<int>(e.code());
        } catch (const std::exception& e) {
            result = std::string("not a tpkit::Error: ") + e.what();
        }
        if (write(fds[1], result.data(), result.size()) < 0)
            _exit(100);
        _exit(code == 0 || code == static_cast<int>(tpkit::Exit::unknown_target) ? 0 : 101);
    }
    close(fds[1]);
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof(buf))) > 0)
        out.append(buf, static_cast<std::size_t>(n));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status))
        return "killed by signal " + std::to_string(WTERMSIG(status)) + " after: " + out;
    if (WEXITSTATUS(status) != 0)
        return "exit " + std::to_string(WEXITSTATUS(status)) + ": " + out;
    return out;
}

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

} // namespace

TEST(BtfLoad, ReferenceKernelsRawAndGzip)
{
    EXPECT_EQ(load_in_child(data_dir / "btf/linux-6.18.btf.gz"), "ok");
    EXPECT_EQ(load_in_child(data_dir / "btf/linux-6.12.btf.gz"), "ok");
    EXPECT_EQ(load_in_child(write_file("raw-6.1.btf", gunzip(data_dir / "btf/linux-6.1.btf.gz"))), "ok");
}

TEST(BtfLoad, EndlessInputIsRefusedAtOnce)
{
    auto start = std::chrono::steady_clock::now();
    std::string got = load_in_child("/dev/zero");
    EXPECT_EQ(got, "/dev/zero is not BTF: neither raw BTF, gzip of it, nor an ELF object");
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(BtfLoad, EndlessPipeAfterValidBtfStopsAtTheSizeItsHeaderAnnounces)
{
    fs::path fifo = scratch() / "endless.fifo";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
    std::string btf = gunzip(data_dir / "btf/linux-6.18.btf.gz");
    pid_t writer = fork();
    if (writer == 0) {
        signal(SIGPIPE, SIG_DFL);
        alarm(30);
        int fd = open(fifo.c_str(), O_WRONLY);
        std::string zeros(1 << 16, '\0');
        for (std::size_t at = 0; at < btf.size();) {
            ssize_t n = write(fd, btf.data() + at, btf.size() - at);
            if (n <= 0)
                _exit(1);
            at += static_cast<std::size_t>(n);
        }
        while (write(fd, zeros.data(), zeros.size()) > 0) {
        }
        _exit(0);
    }
    EXPECT_EQ(load_in_child(fifo), "ok");
    kill(writer, SIGKILL);
    waitpid(writer, nullptr, 0);
}

TEST(BtfLoad, NotBtfTruncatedOrTooLargeIsOneClearError)
{
    std::string btf = gunzip(data_dir / "btf/linux-6.18.btf.gz");

    fs::path text = write_file("text.btf", "hello, world\n");
    EXPECT_EQ(load_in_child(text), text.string() + " is not BTF: neither raw BTF, gzip of it, nor an ELF object");
    fs::path gz_text = write_file("text.btf.gz", std::string(100000, 'x'), true);
    EXPECT_EQ(load_in_child(gz_text),
              gz_text.string() + " is not BTF: neither raw BTF, gzip of it, nor an ELF object");
    fs::path empty = write_file("empty.btf", "");
    EXPECT_TRUE(contains(load_in_child(empty), "is not BTF")) << load_in_child(empty);

    fs::path cut = write_file("cut.btf", btf.substr(0, 1000));
    EXPECT_EQ(load_in_child(cut),
              "truncated BTF " + cut.string() + ": 1000 of " + std::to_string(btf.size()) + " bytes");
    fs::path cut_gz = write_file("cut.btf.gz", btf.substr(0, btf.size() / 2), true);
    EXPECT_TRUE(contains(load_in_child(cut_gz), "truncated BTF " + cut_gz.string()))
        << load_in_child(cut_gz);
    fs::path header_only = write_file("header.btf", btf.substr(0, 10));
    EXPECT_EQ(load_in_child(header_only), "truncated BTF " + header_only.string() + ": 10 bytes");

    // A header announcing 1 GiB of strings.
    std::string huge = btf.substr(0, sizeof(btf_header));
    btf_header hdr{};
    std::memcpy(&hdr, huge.data(), sizeof(hdr));
    hdr.str_len = 1u << 30;
    std::memcpy(huge.data(), &hdr, sizeof(hdr));
    fs::path big = write_file("huge.btf", huge);
    std::string got = load_in_child(big);
    EXPECT_TRUE(contains(got, big.string() + " is not a kernel's BTF: its header announces")) << got;
    EXPECT_TRUE(contains(got, "more than 512 MiB")) << got;
}

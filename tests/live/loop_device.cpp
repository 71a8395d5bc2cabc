// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "loop_device.hpp"

#include <tpkit/bpf/skeleton.hpp>

#include <gtest/gtest.h>

#include <fcntl.h>
#include <linux/blkpg.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>

namespace tpkit::live {

namespace {

std::runtime_error system_error(const std::string& what)
{
    return std::runtime_error(what + ": " + std::strerror(errno));
}

// Adds partition `number` of 2048 sectors at LoopDevice::partition_start(number) to the disk
// open as fd. By ioctl rather than a partition table: a kernel may have no table parser at all.
bool add_partition(int fd, int number)
{
    blkpg_partition partition{};
    partition.start = static_cast<long long>(LoopDevice::partition_start(number)) * 512;
    partition.length = 2048 * 512;
    partition.pno = number;
    blkpg_ioctl_arg arg{};
    arg.op = BLKPG_ADD_PARTITION;
    arg.datalen = sizeof(partition);
    arg.data = &partition;
    return ioctl(fd, BLKPG, &arg) == 0;
}

// Waits up to 5 s for devtmpfs to make the node of a device the kernel has just added.
bool wait_for_node(const std::string& path)
{
    for (int i = 0; i < 500; i++) {
        if (access(path.c_str(), F_OK) == 0)
            return true;
        usleep(10000);
    }
    return false;
}

void direct_io(const std::string& device, const std::vector<DirectIo>& ios, bool write)
{
    int fd = open(device.c_str(), (write ? O_WRONLY : O_RDONLY) | O_DIRECT | O_CLOEXEC);
    if (fd < 0)
        throw system_error("open " + device);
    for (const DirectIo& io : ios) {
        void* raw = nullptr;
        if (posix_memalign(&raw, 4096, io.bytes) != 0) {
            close(fd);
            throw std::runtime_error("posix_memalign failed");
        }
        std::unique_ptr<void, decltype(&std::free)> buffer(raw, &std::free);
        std::memset(raw, 0x5a, io.bytes);
        ssize_t done = write ? pwrite(fd, raw, io.bytes, static_cast<off_t>(io.offset))
                             : pread(fd, raw, io.bytes, static_cast<off_t>(io.offset));
        if (done != static_cast<ssize_t>(io.bytes)) {
            auto error = system_error(device + (write ? " pwrite" : " pread"));
            close(fd);
            throw error;
        }
    }
    close(fd);
}

} // namespace

LoopDevice::LoopDevice(std::size_t bytes, int partitions)
{
    char file[] = "/tmp/tpk-loop-XXXXXX";
    int backing = mkostemp(file, O_CLOEXEC);
    if (backing < 0)
        throw system_error("mkostemp");
    unlink(file);
    if (ftruncate(backing, static_cast<off_t>(bytes)) != 0) {
        close(backing);
        throw system_error("ftruncate");
    }
    int control = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
    if (control < 0) {
        close(backing);
        throw system_error("open /dev/loop-control");
    }
    // Another process may take the free device between the two calls: try the next one then.
    for (int attempt = 0; attempt < 20 && fd_ < 0; attempt++) {
        int number = ioctl(control, LOOP_CTL_GET_FREE);
        if (number < 0)
            break;
        std::string name = "loop" + std::to_string(number);
        int fd = open(("/dev/" + name).c_str(), O_RDWR | O_CLOEXEC);
        if (fd < 0)
            continue;
        loop_config config{};
        config.fd = static_cast<__u32>(backing);
        // PARTSCAN: a loop device takes partitions only with it.
        config.info.lo_flags = LO_FLAGS_AUTOCLEAR | (partitions > 0 ? LO_FLAGS_PARTSCAN : 0);
        if (ioctl(fd, LOOP_CONFIGURE, &config) == 0) {
            fd_ = fd;
            name_ = name;
        } else {
            close(fd);
        }
    }
    int err = errno;
    close(control);
    close(backing);
    if (fd_ < 0) {
        errno = err;
        throw system_error("cannot set up a loop device");
    }
    for (int number = 1; number <= partitions; number++) {
        if (!add_partition(fd_, number) || !wait_for_node("/dev/" + partition_name(number))) {
            auto error = system_error("cannot add partition " + partition_name(number));
            ioctl(fd_, LOOP_CLR_FD);
            close(fd_);
            throw error;
        }
    }
}

LoopDevice::~LoopDevice()
{
    ioctl(fd_, LOOP_CLR_FD);
    close(fd_);
}

void read_direct(const std::string& device, const std::vector<DirectIo>& ios)
{
    direct_io(device, ios, false);
}

void write_direct(const std::string& device, const std::vector<DirectIo>& ios)
{
    direct_io(device, ios, true);
}

std::unique_ptr<ToolRun> start_attached(const std::string& tool, std::vector<std::string> args,
                                        std::size_t links)
{
    args.insert(args.begin(), {tool_path(tool), "--json"});
    auto run = std::make_unique<ToolRun>(args);
    EXPECT_TRUE(run->wait_until_attached(links, std::chrono::seconds(10))) << run->stderr_text();
    return run;
}

std::size_t request_tracking_links()
{
    return tpkit::kernel_has_raw_tracepoint("block_io_start") ? 4 : 3;
}

std::string own_comm()
{
    std::ifstream in("/proc/self/comm");
    std::string comm;
    std::getline(in, comm);
    return comm;
}

} // namespace tpkit::live

// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "tpkit/run/block.hpp"

#include "tpkit/support/error.hpp"

#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <utility>

namespace tpkit {

namespace {

constexpr const char* sys_class_block = "/sys/class/block";

// The kernel's dev_t of /sys/class/block/NAME/dev ("7:3"), nullopt without one.
std::optional<std::uint32_t> dev_of(const std::filesystem::path& dir)
{
    std::ifstream in(dir / "dev");
    unsigned major = 0, minor = 0;
    char colon = 0;
    if (!(in >> major >> colon >> minor) || colon != ':')
        return std::nullopt;
    return major << TPKIT_MINOR_BITS | (minor & TPKIT_MINOR_MASK);
}

} // namespace

BlockDevice find_block_device(const std::string& name)
{
    std::string base = name.rfind("/dev/", 0) == 0 ? name.substr(5) : name;
    std::error_code ec;
    std::filesystem::path dir = std::filesystem::path(sys_class_block) / base;
    std::optional<std::uint32_t> dev;
    if (!base.empty() && base.find('/') == std::string::npos && base != "." && base != "..")
        dev = dev_of(dir);
    if (!dev)
        throw Error(Exit::unknown_target,
                    fmt::format("unknown disk '{}': not in {}", name, sys_class_block));
    return {base, *dev, std::filesystem::exists(dir / "partition", ec)};
}

void BlockDeviceNames::load()
{
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(sys_class_block, ec))
        if (auto dev = dev_of(entry.path()))
            names_[*dev] = entry.path().filename().string();
}

const std::string& BlockDeviceNames::name_of(std::uint32_t dev)
{
    auto it = names_.find(dev);
    if (it == names_.end()) {
        load();
        it = names_.find(dev);
    }
    if (it == names_.end())
        it = names_.emplace(dev, fmt::format("{}:{}", dev >> TPKIT_MINOR_BITS,
                                             dev & TPKIT_MINOR_MASK)).first;
    return it->second;
}

std::string request_op_name(std::uint32_t op)
{
    switch (op) {
    case TPKIT_REQ_OP_READ: return "Read";
    case TPKIT_REQ_OP_WRITE: return "Write";
    case TPKIT_REQ_OP_FLUSH: return "Flush";
    case TPKIT_REQ_OP_DISCARD: return "Discard";
    case TPKIT_REQ_OP_SECURE_ERASE: return "SecureErase";
    case TPKIT_REQ_OP_WRITE_ZEROES: return "WriteZeroes";
    default: return fmt::format("Op{}", op);
    }
}

std::string request_flags_text(std::uint32_t op, std::uint32_t flags)
{
    // bcc's order.
    static const std::pair<std::uint32_t, const char*> names[] = {
        {TPKIT_REQ_NOWAIT, "NoWait"},       {TPKIT_REQ_BACKGROUND, "Background"},
        {TPKIT_REQ_RAHEAD, "ReadAhead"},    {TPKIT_REQ_PREFLUSH, "PreFlush"},
        {TPKIT_REQ_FUA, "FUA"},             {TPKIT_REQ_INTEGRITY, "Integrity"},
        {TPKIT_REQ_IDLE, "Idle"},           {TPKIT_REQ_NOMERGE, "NoMerge"},
        {TPKIT_REQ_PRIO, "Priority"},       {TPKIT_REQ_META, "Metadata"},
        {TPKIT_REQ_SYNC, "Sync"},
    };
    std::string text;
    for (const auto& [bit, name] : names)
        if (flags & bit)
            text += std::string(name) + "-";
    return text + request_op_name(op);
}

std::string request_rwbs(std::uint32_t op, std::uint32_t flags)
{
    std::string rwbs;
    if (flags & TPKIT_REQ_PREFLUSH)
        rwbs += 'F';
    switch (op) {
    case TPKIT_REQ_OP_WRITE: rwbs += 'W'; break;
    case TPKIT_REQ_OP_DISCARD: rwbs += 'D'; break;
    case TPKIT_REQ_OP_SECURE_ERASE: rwbs += "DE"; break;
    case TPKIT_REQ_OP_FLUSH: rwbs += 'F'; break;
    case TPKIT_REQ_OP_READ: rwbs += 'R'; break;
    default: rwbs += 'N'; break;
    }
    if (flags & TPKIT_REQ_FUA)
        rwbs += 'F';
    if (flags & TPKIT_REQ_RAHEAD)
        rwbs += 'A';
    if (flags & TPKIT_REQ_SYNC)
        rwbs += 'S';
    if (flags & TPKIT_REQ_META)
        rwbs += 'M';
    return rwbs;
}

} // namespace tpkit

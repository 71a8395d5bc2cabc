// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// tpsnoop's decoding of raw records, laid out as the reference kernels' real formats say.
#include "reference_data.hpp"
#include "engine/decode.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

using tpkit::test::reference_format;

// A record built field by field at the format's offsets.
class Record {
public:
    explicit Record(const tpkit::EventFormat& f) : f_(f), bytes_(f.fixed_size()) {}

    Record& num(const char* name, std::uint64_t v)
    {
        const tpkit::Field* field = f_.field(name);
        EXPECT_NE(field, nullptr) << name;
        std::memcpy(bytes_.data() + field->offset, &v, field->size);
        return *this;
    }
    Record& chars(const char* name, std::string_view s)
    {
        const tpkit::Field* field = f_.field(name);
        std::memset(bytes_.data() + field->offset, 0, field->size);
        std::memcpy(bytes_.data() + field->offset, s.data(), std::min<std::size_t>(s.size(), field->size));
        return *this;
    }
    // __data_loc: the string (NUL included) appended after the fixed part.
    Record& dynamic(const char* name, std::string_view s)
    {
        const tpkit::Field* field = f_.field(name);
        std::uint32_t start = static_cast<std::uint32_t>(bytes_.size());
        std::uint32_t len = static_cast<std::uint32_t>(s.size() + 1);
        bytes_.resize(bytes_.size() + len);
        std::memcpy(bytes_.data() + start, s.data(), s.size());
        std::uint32_t loc = (len << 16) | start;
        std::memcpy(bytes_.data() + field->offset, &loc, 4);
        return *this;
    }
    std::span<const std::byte> span() const
    {
        return {reinterpret_cast<const std::byte*>(bytes_.data()), bytes_.size()};
    }
    std::vector<std::uint8_t>& bytes() { return bytes_; }

private:
    const tpkit::EventFormat& f_;
    std::vector<std::uint8_t> bytes_;
};

std::string text(const tpkit::EventFormat& f, const Record& r, const char* field)
{
    return tpkit::decode_field(*f.field(field), r.span()).str();
}

// What tpsnoop receives: header then record.
std::vector<std::byte> transport_record(const tpsnoop_header& h, const Record& r)
{
    std::vector<std::byte> data(sizeof(h) + r.span().size());
    std::memcpy(data.data(), &h, sizeof(h));
    std::memcpy(data.data() + sizeof(h), r.span().data(), r.span().size());
    return data;
}

} // namespace

TEST(Decode, ForkWithDataLocStringsOn618)
{
    auto f = reference_format("linux-6.18", "sched", "sched_process_fork");
    Record r(f);
    r.num("common_type", f.id).num("common_pid", 4242).num("parent_pid", 4242).num("child_pid", 4300);
    r.dynamic("parent_comm", "bash").dynamic("child_comm", "make -j2");
    EXPECT_EQ(text(f, r, "parent_comm"), "bash");
    EXPECT_EQ(text(f, r, "child_comm"), "make -j2");
    EXPECT_EQ(text(f, r, "child_pid"), "4300");
    EXPECT_EQ(text(f, r, "common_pid"), "4242");

    tpsnoop_header h{};
    h.timestamp_ns = 5'000'000'123;
    h.pid = 4242;
    h.tid = 4242;
    h.cpu = 1;
    std::memcpy(h.comm, "bash", 4);
    h.record_size = static_cast<std::uint32_t>(r.span().size());
    auto data = transport_record(h, r);
    tpkit::SnoopEvent event;
    ASSERT_TRUE(tpkit::SnoopEvent::parse(data, event));
    EXPECT_EQ(event.event_id(), f.id);
    auto fields = tpkit::fields_to_print(f, {});
    ASSERT_EQ(fields.size(), 4u); // common_* left to the line's prefix
    std::string line = "kept|"; // the writers append
    tpkit::append_snoop_text(line, event, f, fields, "5.000000");
    EXPECT_EQ(line,
              "kept|"
              "            bash-4242    [001] 5.000000: sched_process_fork: parent_comm=bash "
              "parent_pid=4242 child_comm=make -j2 child_pid=4300");
    line.clear();
    tpkit::append_snoop_json(line, event, f, tpkit::fields_to_print(f, {"child_comm", "common_pid", "nosuch"}),
                             "time_ns", 77);
    EXPECT_EQ(line,
              R"({"type":"event","time_ns":77,"event":"sched:sched_process_fork","comm":"bash","pid":4242,)"
              R"("tid":4242,"cpu":1,"fields":{"child_comm":"make -j2","common_pid":4242}})");

    // A header that promises more than arrived is refused.
    h.record_size += 1;
    auto short_data = transport_record(h, r);
    EXPECT_FALSE(tpkit::SnoopEvent::parse(short_data, event));
}

TEST(Decode, ForkWithCharArraysOn61And612)
{
    for (const char* kernel : {"linux-6.1", "linux-6.12"}) {
        SCOPED_TRACE(kernel);
        auto f = reference_format(kernel, "sched", "sched_process_fork");
        Record r(f);
        r.chars("parent_comm", "bash").num("parent_pid", 1).chars("child_comm", "0123456789abcdef");
        r.num("child_pid", 2);
        EXPECT_EQ(text(f, r, "parent_comm"), "bash");
        // A full char[16] has no NUL: all 16 bytes, nothing of the next field.
        EXPECT_EQ(text(f, r, "child_comm"), "0123456789abcdef");
        EXPECT_EQ(text(f, r, "child_pid"), "2");
    }
}

// cxl's events on 6.12 carry a uuid_t, a struct of 16 bytes: no integer, so its bytes in hex.
TEST(Decode, StructFieldIsItsBytesOn612)
{
    auto f = reference_format("linux-6.12", "cxl", "cxl_generic_event");
    ASSERT_EQ(f.field("hdr_uuid")->type, "uuid_t");
    ASSERT_EQ(f.field("hdr_uuid")->size, 16u);
    Record r(f);
    for (std::uint8_t i = 0; i < 16; ++i)
        r.bytes()[f.field("hdr_uuid")->offset + i] = static_cast<std::uint8_t>(0xf0 | i);
    r.num("serial", 42);
    auto uuid = tpkit::decode_field(*f.field("hdr_uuid"), r.span());
    EXPECT_EQ(uuid.str(), "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");
    std::string json;
    uuid.append_json(json);
    EXPECT_EQ(json, "\"f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff\"");
    EXPECT_EQ(text(f, r, "serial"), "42");
}

TEST(Decode, SyscallIntegersPointersAndSigns)
{
    auto f = reference_format("linux-6.18", "syscalls", "sys_enter_read");
    Record r(f);
    r.num("__syscall_nr", static_cast<std::uint32_t>(-1)).num("fd", 3).num("buf", 0x7ffd8551e738ULL);
    r.num("count", 832);
    EXPECT_EQ(text(f, r, "__syscall_nr"), "-1"); // int, signed:1
    EXPECT_EQ(text(f, r, "fd"), "3");
    EXPECT_EQ(text(f, r, "buf"), "0x7ffd8551e738");
    EXPECT_EQ(text(f, r, "count"), "832");
    EXPECT_EQ(tpkit::decode_field(*f.field("buf"), r.span()).json(), "\"0x7ffd8551e738\"");
    EXPECT_EQ(tpkit::decode_field(*f.field("__syscall_nr"), r.span()).json(), "-1");

    // A record cut short: the field is missing, not garbage.
    auto cut = r.span().first(30);
    EXPECT_EQ(tpkit::decode_field(*f.field("count"), cut).kind, tpkit::DecodedValue::Kind::missing);
    EXPECT_EQ(tpkit::decode_field(*f.field("count"), cut).json(), "null");
}

TEST(Decode, ByteArraysAndEscapes)
{
    auto f = reference_format("linux-6.18", "tcp", "tcp_probe");
    Record r(f);
    auto& b = r.bytes();
    const tpkit::Field* saddr = f.field("saddr");
    ASSERT_EQ(saddr->size, 28u);
    b[saddr->offset] = 2;
    b[saddr->offset + 4] = 127;
    b[saddr->offset + 7] = 1;
    auto v = tpkit::decode_field(*saddr, r.span());
    ASSERT_EQ(v.kind, tpkit::DecodedValue::Kind::array);
    ASSERT_EQ(v.elements.size(), saddr->size); // a byte each
    EXPECT_EQ(v.str().substr(0, 20), "[2,0,0,0,127,0,0,1,0");
    EXPECT_EQ(v.json().substr(0, 20), "[2,0,0,0,127,0,0,1,0");

    auto fork = reference_format("linux-6.18", "sched", "sched_process_fork");
    Record s(fork);
    s.dynamic("parent_comm", "a\tb\"c").dynamic("child_comm", "");
    EXPECT_EQ(text(fork, s, "parent_comm"), "a\\x09b\"c");
    EXPECT_EQ(tpkit::decode_field(*fork.field("parent_comm"), s.span()).json(), R"("a\tb\"c")");
    EXPECT_EQ(text(fork, s, "child_comm"), "");
}

TEST(Decode, TextPrefixPadsTheEscapedComm)
{
    auto f = reference_format("linux-6.18", "syscalls", "sys_enter_read");
    Record r(f);
    r.num("common_type", f.id).num("fd", 3);
    auto line = [&](std::string_view comm, std::uint32_t tid, std::uint32_t cpu) {
        tpsnoop_header h{};
        std::memcpy(h.comm, comm.data(), std::min(comm.size(), sizeof(h.comm)));
        h.tid = tid;
        h.cpu = cpu;
        h.record_size = static_cast<std::uint32_t>(r.span().size());
        auto data = transport_record(h, r);
        tpkit::SnoopEvent event;
        EXPECT_TRUE(tpkit::SnoopEvent::parse(data, event));
        std::string out;
        tpkit::append_snoop_text(out, event, f, tpkit::fields_to_print(f, {"fd"}), "1.000000");
        return out;
    };
    EXPECT_EQ(line("a\tb", 7, 12), "          a\\x09b-7       [012] 1.000000: sys_enter_read: fd=3");
    // fmt pads UTF-8 by columns: "é" is one column of two bytes.
    EXPECT_EQ(line("caf\xc3\xa9", 12345678, 1234),
              "            caf\xc3\xa9-12345678 [1234] 1.000000: sys_enter_read: fd=3");
    EXPECT_EQ(line("0123456789abcdef", 1, 0),
              "0123456789abcdef-1       [000] 1.000000: sys_enter_read: fd=3");
}

TEST(Decode, FieldsOutsideTheRecordAreMissingEvenWhenOffsetPlusSizeWraps)
{
    std::vector<std::byte> bytes(64, std::byte{0x41});
    std::span<const std::byte> record(bytes);
    auto missing = [&](tpkit::Field f) {
        return tpkit::decode_field(f, record).kind == tpkit::DecodedValue::Kind::missing;
    };
    using tpkit::FieldKind;
    // offset + size wraps to 16 in 32 bits, inside the record.
    EXPECT_TRUE(missing({"u64", "u64", "wrap", 0xFFFFFFF0u, 0x20}));
    EXPECT_TRUE(missing({"char[32]", "char", "wrap_text", 0xFFFFFFF0u, 0x20, false, 32, FieldKind::array}));
    EXPECT_TRUE(missing({"u32[8]", "u32", "wrap_array", 0xFFFFFFF0u, 0x20, false, 8, FieldKind::array}));
    EXPECT_TRUE(missing({"__data_loc char[]", "char", "wrap_loc", 0xFFFFFFFCu, 4, false, 0,
                         FieldKind::data_loc}));
    EXPECT_TRUE(missing({"__rel_loc char[]", "char", "wrap_rel", 0xFFFFFFFCu, 8, false, 0,
                         FieldKind::rel_loc}));
    EXPECT_TRUE(missing({"u32", "u32", "past_end", 62, 4}));
    EXPECT_TRUE(missing({"u32", "u32", "far", 1u << 20, 4}));
    // A dynamic field too small to hold its u32 locator.
    EXPECT_TRUE(missing({"__data_loc char[]", "char", "short_loc", 0, 2, false, 0, FieldKind::data_loc}));
    // A locator pointing past the record.
    std::uint32_t loc = (16u << 16) | 60u;
    std::memcpy(bytes.data() + 8, &loc, 4);
    EXPECT_TRUE(missing({"__data_loc char[]", "char", "loc_past_end", 8, 4, false, 0, FieldKind::data_loc}));
    EXPECT_TRUE(missing({"__rel_loc char[]", "char", "rel_past_end", 8, 4, false, 0, FieldKind::rel_loc}));
    // And in bounds, still decoded.
    loc = (4u << 16) | 40u;
    std::memcpy(bytes.data() + 8, &loc, 4);
    EXPECT_EQ(tpkit::decode_field({"__data_loc char[]", "char", "ok", 8, 4, false, 0, FieldKind::data_loc},
                                  record)
                  .str(),
              "AAAA");
}

// The kernel's own text (KernelText): the reference kernels' print fmts through libtraceevent,
// with the kernel's symbols, enumerators and syscall form.
namespace {

class KernelTextOf {
public:
    explicit KernelTextOf(const char* kernel)
        : kernel_(kernel),
          text_(fs::path(TPKIT_TEST_DATA) / "symbols" / "kallsyms",
                fs::path(TPKIT_TEST_DATA) / "btf" / (std::string(kernel) + ".btf.gz"))
    {
    }
    const tpkit::EventFormat& event(const char* system, const char* name)
    {
        formats_.push_back(std::make_unique<tpkit::EventFormat>(reference_format(kernel_, system, name)));
        text_.add_file(*formats_.back(),
                       fs::path(TPKIT_FORMATS_DIR) / kernel_ / system / name / "format");
        return *formats_.back();
    }
    std::string text(const tpkit::EventFormat& f, const Record& r)
    {
        std::string out = "kept|";
        EXPECT_TRUE(text_.append(out, f, r.span()));
        return out.substr(5);
    }
    std::string extras(const tpkit::EventFormat& f, const Record& r, const char* field)
    {
        std::string out;
        text_.append_json_extras(out, f, *f.field(field), r.span());
        return out;
    }
    tpkit::KernelText& kernel_text() { return text_; }

private:
    const char* kernel_;
    tpkit::KernelText text_;
    std::vector<std::unique_ptr<tpkit::EventFormat>> formats_;
};

} // namespace

TEST(KernelText, SymbolicNamesAddressesAndFlagsOn618)
{
    KernelTextOf kernel("linux-6.18");
    const auto& tcp = kernel.event("sock", "inet_sock_set_state");
    Record r(tcp);
    r.num("common_type", tcp.id).num("skaddr", 0xffff888100001000).num("oldstate", 7);
    r.num("newstate", 10).num("sport", 8080).num("dport", 0).num("family", 2).num("protocol", 6);
    r.num("saddr", 0x0100007f).num("daddr", 0x0100007f);
    const std::uint8_t mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1};
    std::memcpy(r.bytes().data() + tcp.field("saddr_v6")->offset, mapped, 16);
    std::memcpy(r.bytes().data() + tcp.field("daddr_v6")->offset, mapped, 16);
    EXPECT_EQ(kernel.text(tcp, r),
              "inet_sock_set_state: family=AF_INET protocol=IPPROTO_TCP sport=8080 dport=0 "
              "saddr=127.0.0.1 daddr=127.0.0.1 saddrv6=::ffff:127.0.0.1 daddrv6=::ffff:127.0.0.1 "
              "oldstate=TCP_CLOSE newstate=TCP_LISTEN");
    EXPECT_EQ(kernel.extras(tcp, r, "newstate"), R"(,"newstate_sym":"TCP_LISTEN")");
    EXPECT_EQ(kernel.extras(tcp, r, "family"), R"(,"family_sym":"AF_INET")");
    EXPECT_EQ(kernel.extras(tcp, r, "sport"), "");

    const auto& softirq = kernel.event("irq", "softirq_entry");
    Record s(softirq);
    s.num("common_type", softirq.id).num("vec", 7);
    EXPECT_EQ(kernel.text(softirq, s), "softirq_entry: vec=7 [action=SCHED]");

    // %pS through kallsyms with the function's size, %p as 16 hex digits, __print_flags.
    const auto& kmalloc = kernel.event("kmem", "kmalloc");
    Record k(kmalloc);
    k.num("common_type", kmalloc.id).num("call_site", 0xffffffff81c3b010).num("ptr", 0xffff8881d77adba0);
    k.num("bytes_req", 96).num("bytes_alloc", 128).num("gfp_flags", 3520).num("node", -1);
    std::string line = kernel.text(kmalloc, k);
    EXPECT_EQ(line.substr(0, line.find(" node=")),
              "kmalloc: call_site=schedule+0x10/0x100 ptr=ffff8881d77adba0 bytes_req=96 "
              "bytes_alloc=128 gfp_flags=GFP_KERNEL|__GFP_ZERO");
    EXPECT_EQ(kernel.extras(kmalloc, k, "call_site"), R"(,"call_site_sym":"schedule+0x10/0x100")");
    EXPECT_EQ(kernel.extras(kmalloc, k, "gfp_flags"), R"(,"gfp_flags_sym":"GFP_KERNEL|__GFP_ZERO")");
    k.num("gfp_flags", 0).num("ptr", 0).num("call_site", 0xffffffffc0a01410);
    line = kernel.text(kmalloc, k);
    EXPECT_NE(line.find("call_site=ext4_sync_fs+0x10/0xfec00 [ext4] ptr=0000000000000000 "), std::string::npos)
        << line;
    EXPECT_NE(line.find(" gfp_flags=none "), std::string::npos) << line;
    EXPECT_EQ(kernel.extras(kmalloc, k, "gfp_flags"), R"(,"gfp_flags_sym":"none")");
}

TEST(KernelText, EnumeratorsFromBtfAndDeviceNumbersOn618)
{
    KernelTextOf kernel("linux-6.18");
    const auto& issue = kernel.event("block", "block_rq_issue");
    Record r(issue);
    r.num("common_type", issue.id).num("dev", (7u << 20) | 3).num("sector", 2048).num("nr_sector", 8);
    r.num("bytes", 4096).num("ioprio", (2 << 13) | 4).chars("rwbs", "RS").chars("comm", "dd");
    r.dynamic("cmd", "");
    EXPECT_EQ(kernel.text(issue, r), "block_rq_issue: 7,3 RS 4096 () 2048 + 8 be,0,4 [dd]");
}

TEST(KernelText, SyscallsInTheKernelsOwnForm)
{
    KernelTextOf kernel("linux-6.18");
    kernel.kernel_text().set_syscall_args(tpkit::KernelText::SyscallArgs::decimal_below_10);
    const auto& enter = kernel.event("syscalls", "sys_enter_openat");
    Record r(enter);
    r.num("common_type", enter.id).num("__syscall_nr", 257).num("dfd", 0xffffff9c);
    r.num("filename", 0x7ffd4f1eaa80).num("flags", 0x241).num("mode", 0);
    EXPECT_EQ(kernel.text(enter, r),
              "sys_openat(dfd: 0xffffff9c, filename: 0x7ffd4f1eaa80, flags: 0x241, mode: 0)");
    EXPECT_EQ(kernel.extras(enter, r, "__syscall_nr"), R"(,"__syscall_nr_sym":"openat")");
    r.num("mode", 9).num("flags", 10);
    EXPECT_EQ(kernel.text(enter, r),
              "sys_openat(dfd: 0xffffff9c, filename: 0x7ffd4f1eaa80, flags: 0xa, mode: 9)");
    kernel.kernel_text().set_syscall_args(tpkit::KernelText::SyscallArgs::hex); // before 6.18
    EXPECT_EQ(kernel.text(enter, r), "sys_openat(dfd: ffffff9c, filename: 7ffd4f1eaa80, flags: a, mode: 9)");

    const auto& exit = kernel.event("syscalls", "sys_exit_openat");
    Record e(exit);
    e.num("common_type", exit.id).num("__syscall_nr", 257).num("ret", static_cast<std::uint64_t>(-2));
    EXPECT_EQ(kernel.text(exit, e), "sys_openat -> 0xfffffffffffffffe");
    EXPECT_EQ(kernel.extras(exit, e, "ret"), R"(,"ret_sym":"-ENOENT")");
    e.num("ret", 3);
    EXPECT_EQ(kernel.text(exit, e), "sys_openat -> 0x3");
    EXPECT_EQ(kernel.extras(exit, e, "ret"), "");

    const auto& raw = kernel.event("raw_syscalls", "sys_exit");
    Record x(raw);
    x.num("common_type", raw.id).num("id", 0).num("ret", static_cast<std::uint64_t>(-13));
    EXPECT_EQ(kernel.text(raw, x), "sys_exit: NR 0 = -13");
    EXPECT_EQ(kernel.extras(raw, x, "id"), R"(,"id_sym":"read")");
    EXPECT_EQ(kernel.extras(raw, x, "ret"), R"(,"ret_sym":"-EACCES")");
}

TEST(KernelText, ForkAndExitOn61And612)
{
    for (const char* version : {"linux-6.1", "linux-6.12"}) {
        SCOPED_TRACE(version);
        KernelTextOf kernel(version);
        const auto& fork = kernel.event("sched", "sched_process_fork");
        Record r(fork);
        r.num("common_type", fork.id).chars("parent_comm", "bash").num("parent_pid", 10);
        r.chars("child_comm", "bash").num("child_pid", 11);
        EXPECT_EQ(kernel.text(fork, r), "sched_process_fork: comm=bash pid=10 child_comm=bash child_pid=11");
        const auto& sw = kernel.event("sched", "sched_switch");
        Record s(sw);
        s.num("common_type", sw.id).chars("prev_comm", "bash").num("prev_pid", 10).num("prev_prio", 120);
        s.num("prev_state", 1).chars("next_comm", "swapper/1").num("next_pid", 0).num("next_prio", 120);
        EXPECT_EQ(kernel.text(sw, s), "sched_switch: prev_comm=bash prev_pid=10 prev_prio=120 prev_state=S "
                                      "==> next_comm=swapper/1 next_pid=0 next_prio=120");
    }
}

TEST(KernelText, JsonCarriesTheNamesBesideTheValues)
{
    KernelTextOf kernel("linux-6.18");
    const auto& tcp = kernel.event("sock", "inet_sock_set_state");
    Record r(tcp);
    r.num("common_type", tcp.id).num("oldstate", 7).num("newstate", 10).num("family", 2).num("protocol", 6);
    tpsnoop_header h{};
    h.pid = h.tid = 5;
    std::memcpy(h.comm, "nc", 2);
    h.record_size = static_cast<std::uint32_t>(r.span().size());
    auto data = transport_record(h, r);
    tpkit::SnoopEvent event;
    ASSERT_TRUE(tpkit::SnoopEvent::parse(data, event));
    std::string line;
    tpkit::append_snoop_json(line, event, tcp, tpkit::fields_to_print(tcp, {"newstate", "sport"}),
                             "time_ns", 1, &kernel.kernel_text());
    EXPECT_EQ(line, R"({"type":"event","time_ns":1,"event":"sock:inet_sock_set_state","comm":"nc","pid":5,"tid":5,)"
                    R"("cpu":0,"fields":{"newstate":10,"newstate_sym":"TCP_LISTEN","sport":0}})");
}

namespace {

// What tpsnoop receives for a syscall event with its strings: header, record, zeros to
// sizeof(tpkit_syscall_record), one tpkit_user_str per bit of the mask.
std::vector<std::byte> with_strings(const Record& r, std::uint32_t mask,
                                    const std::vector<tpkit_user_str>& strings)
{
    tpsnoop_header h{};
    std::memcpy(h.comm, "cat", 3);
    h.tid = 7;
    h.record_size = static_cast<std::uint32_t>(r.span().size());
    h.user_strings = mask;
    std::vector<std::byte> data(sizeof(h) + sizeof(tpkit_syscall_record) +
                                strings.size() * sizeof(tpkit_user_str));
    std::memcpy(data.data(), &h, sizeof(h));
    std::memcpy(data.data() + sizeof(h), r.span().data(), r.span().size());
    std::memcpy(data.data() + sizeof(h) + sizeof(tpkit_syscall_record), strings.data(),
                strings.size() * sizeof(tpkit_user_str));
    return data;
}

tpkit_user_str user_str(std::string_view text, std::int32_t len, std::uint32_t flags = 0)
{
    tpkit_user_str s{};
    s.len = len;
    s.flags = flags;
    std::memcpy(s.text, text.data(), std::min(text.size(), sizeof(s.text) - 1));
    return s;
}

} // namespace

TEST(Decode, SyscallStringsShownAsStraceShowsThem)
{
    KernelTextOf kernel("linux-6.18");
    kernel.kernel_text().set_syscall_args(tpkit::KernelText::SyscallArgs::decimal_below_10);
    const auto& f = kernel.event("syscalls", "sys_enter_renameat2");
    Record r(f);
    r.num("common_type", f.id).num("olddfd", 0xffffff9c).num("oldname", 0x7ffd0010);
    r.num("newdfd", 3).num("newname", 1).num("flags", 0);
    std::string long_text(255, 'x');
    auto mask = (1u << 1) | (1u << 3);
    auto read = [&](const std::vector<tpkit_user_str>& strings, std::string& text, std::string& json,
                    std::string& fields) {
        auto data = with_strings(r, mask, strings);
        tpkit::SnoopEvent event;
        ASSERT_TRUE(tpkit::SnoopEvent::parse(data, event));
        text.clear();
        ASSERT_TRUE(kernel.kernel_text().append(text, f, event.record, event.strings));
        json.clear();
        tpkit::append_snoop_json(json, event, f, tpkit::fields_to_print(f, {"oldname", "newname"}),
                                 "time_ns", 1);
        fields.clear();
        tpkit::append_snoop_fields(fields, event, f, tpkit::fields_to_print(f, {"oldname", "newname"}));
    };
    std::string text, json, fields;
    // A quote, a backslash and a newline escaped; the bad pointer (newname, 1) as the kernel
    // prints it, and in JSON the address alone.
    read({user_str("/tmp/a\"b\\c\n", 12), user_str("", -14)}, text, json, fields);
    EXPECT_EQ(text, "sys_renameat2(olddfd: 0xffffff9c, oldname: \"/tmp/a\\\"b\\\\c\\x0a\", newdfd: 3, "
                    "newname: 1, flags: 0)");
    EXPECT_EQ(fields, "sys_enter_renameat2: oldname=\"/tmp/a\\\"b\\\\c\\x0a\" newname=0x1");
    EXPECT_EQ(json, R"({"type":"event","time_ns":1,"event":"syscalls:sys_enter_renameat2","comm":"cat","pid":0,)"
                    R"("tid":7,"cpu":0,"fields":{"oldname":"0x7ffd0010","oldname_sym":"/tmp/a\"b\\c\n",)"
                    R"("newname":"0x1"}})");
    // Cut: "..." after it, "_cut":true.
    read({user_str(long_text, 256, TPKIT_USER_STR_CUT), user_str("/b", 3)}, text, json, fields);
    EXPECT_EQ(text, "sys_renameat2(olddfd: 0xffffff9c, oldname: \"" + long_text +
                        "\"..., newdfd: 3, newname: \"/b\", flags: 0)");
    EXPECT_EQ(fields, "sys_enter_renameat2: oldname=\"" + long_text + "\"... newname=\"/b\"");
    EXPECT_NE(json.find(R"("oldname_sym":")" + long_text + R"(","oldname_cut":true,"newname":"0x1","newname_sym":"/b"})"),
              std::string::npos) << json;
    // A record whose strings did not all arrive: shown without them.
    auto data = with_strings(r, mask, {user_str("/a", 3)});
    tpkit::SnoopEvent event;
    ASSERT_TRUE(tpkit::SnoopEvent::parse(data, event));
    EXPECT_FALSE(event.strings.find(f, *f.field("oldname")));
}

namespace {

// A tpsnoop transport record with kernel strings: header, record, zeros to where the strings
// start, one tpkit_user_str per string.
std::vector<std::byte> with_kernel_strings(const Record& r, const std::vector<tpkit_user_str>& strings)
{
    tpsnoop_header h{};
    h.record_size = static_cast<std::uint32_t>(r.span().size());
    h.user_strings = (1u << strings.size()) - 1;
    std::size_t at = sizeof(h) + tpkit_strings_offset(h.record_size);
    std::vector<std::byte> data(at + strings.size() * sizeof(tpkit_user_str));
    std::memcpy(data.data(), &h, sizeof(h));
    std::memcpy(data.data() + sizeof(h), r.span().data(), r.span().size());
    std::memcpy(data.data() + at, strings.data(), strings.size() * sizeof(tpkit_user_str));
    return data;
}

} // namespace

// The kernel's vsnprintf prints %#x of zero as 0x0 (C's printf: 0), the prefix inside the width.
TEST(KernelText, AlternateHexOfZeroAsTheKernelPrintsIt)
{
    KernelTextOf kernel("linux-6.18");
    const auto& fib = kernel.event("fib6", "fib6_table_lookup");
    Record r(fib);
    r.num("common_type", fib.id).num("tb_id", 254).num("flowlabel", 0);
    std::string line = kernel.text(fib, r);
    EXPECT_NE(line.find(" flowlabel 0x0 "), std::string::npos) << line;
    r.num("flowlabel", 0xbeef);
    line = kernel.text(fib, r);
    EXPECT_NE(line.find(" flowlabel 0xbeef "), std::string::npos) << line;

    const auto& probe = kernel.event("tcp", "tcp_probe");
    Record p(probe);
    p.num("common_type", probe.id).num("mark", 0);
    line = kernel.text(probe, p);
    EXPECT_NE(line.find(" mark=0x0 "), std::string::npos) << line;
}

// `x & (A | B)`: libtraceevent parses the group as (x & A) | B, and a - b - c as a - (b - c).
TEST(KernelText, OperatorsGroupAsInC)
{
    KernelTextOf kernel("linux-6.18");
    const auto& start = kernel.event("timer", "timer_start");
    Record r(start);
    r.num("common_type", start.id).num("flags", 0x5).num("expires", 100).num("now", 90);
    std::string line = kernel.text(start, r);
    EXPECT_NE(line.find(" cpu=5 idx=0 flags="), std::string::npos) << line;
    EXPECT_TRUE(line.ends_with(" flags=")) << line;
    r.num("flags", 0x00080000 | 0x00200000 | (3u << 22) | 1);
    line = kernel.text(start, r);
    EXPECT_TRUE(line.ends_with(" cpu=1 idx=3 flags=D|I")) << line;
    EXPECT_NE(line.find(" [timeout=10] "), std::string::npos) << line;
}

// jiffies in a print fmt is the value read at the event (libtraceevent alone takes 0).
TEST(KernelText, JiffiesAtTheEvent)
{
    KernelTextOf kernel("linux-6.18");
    const auto& wb = kernel.event("writeback", "writeback_single_inode");
    EXPECT_TRUE(tpkit::reads_jiffies(wb));
    EXPECT_FALSE(tpkit::reads_jiffies(kernel.event("timer", "timer_start")));
    Record r(wb);
    r.num("common_type", wb.id).num("dirtied_when", 4295000000).num("ino", 12);
    std::string out;
    ASSERT_TRUE(kernel.kernel_text().append(out, wb, r.span(), {}, 4295000000 + 3 * 250 + 249));
    EXPECT_NE(out.find(" ino=12 state= dirtied_when=4295000000 age=3 "), std::string::npos) << out;
}

// `char *` fields into kernel memory print as the strings read at the event: a
// __tracepoint_string (rcu_utilization), a __func__ (maple_tree's print fmt, whose raw tab
// libtraceevent could not parse), NULL as the kernel's (null).
TEST(KernelText, KernelStringsReadAtTheEvent)
{
    for (const char* version : {"linux-6.1", "linux-6.12", "linux-6.18"}) {
        KernelTextOf kernel(version);
        const auto& rcu = kernel.event("rcu", "rcu_utilization");
        Record r(rcu);
        r.num("common_type", rcu.id).num("s", 0xffffffff82a0b1c0);
        auto data = with_kernel_strings(r, {user_str("Start context switch", 21)});
        tpkit::SnoopEvent event;
        ASSERT_TRUE(tpkit::SnoopEvent::parse(data, event));
        std::string out;
        ASSERT_TRUE(kernel.kernel_text().append(out, rcu, event.record, event.strings));
        EXPECT_EQ(out, "rcu_utilization: Start context switch");
        out.clear();
        tpkit::append_snoop_fields(out, event, rcu, tpkit::fields_to_print(rcu, {}));
        EXPECT_EQ(out, R"(rcu_utilization: s="Start context switch")");

        const auto& op = kernel.event("maple_tree", "ma_write");
        Record m(op);
        m.num("common_type", op.id).num("fn", 0xffffffff82a0b200).num("node", 0xffff888100a0b000);
        m.num("min", 0).num("max", 0xffffffffffffffff).num("index", 4096).num("last", 8191);
        m.num("piv", 0).num("val", 0xffff888100a0c000);
        data = with_kernel_strings(m, {user_str("mas_wr_store_entry", 19)});
        ASSERT_TRUE(tpkit::SnoopEvent::parse(data, event));
        out.clear();
        ASSERT_TRUE(kernel.kernel_text().append(out, op, event.record, event.strings)) << version;
        EXPECT_EQ(out, "ma_write: mas_wr_store_entry\tNode ffff888100a0b000 (0 18446744073709551615) "
                       "range:4096-8191 piv (0) val ffff888100a0c000")
            << version;

        r.num("s", 0);
        EXPECT_EQ(kernel.text(rcu, r), "rcu_utilization: (null)");
        r.num("s", 0xffffffff82a0b1c0); // not read: the kernel would have printed it
        EXPECT_EQ(kernel.text(rcu, r), "rcu_utilization: (efault)");
    }
}

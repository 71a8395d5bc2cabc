// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
// hardirqs' collector: its options and how it opens, for its main and for the exporter.
#pragma once

#include "hardirqs.h"
#include "hardirqs.skel.h"

#include "irq_tables.hpp"

namespace tpkit::hardirqs {

using Options = irq_tables::Options;

inline void add_options(Cli& cli, Options& options)
{
    irq_tables::add_options(cli, options, "--count");
}

inline std::unique_ptr<Collector> open(const Cli& cli, const Options& options)
{
    return irq_tables::open<hardirqs_bpf, hardirqs_key>(
        cli, options, HARDIRQS_MAX_NAMES,
        {"irq:irq_handler_exit", "hardirq", "time in hard IRQ handlers",
         [](const hardirqs_key& key) { return std::string(text_of(key.name)); }});
}

} // namespace tpkit::hardirqs

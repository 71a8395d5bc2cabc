// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "collectors/hardirqs.hpp"

#include <tpkit/tools/hardirqs.h>
#include "hardirqs.skel.h"

#include <tpkit/run/columns.hpp>

namespace tpkit::hardirqs {

void add_options(Cli& cli, Options& options)
{
    irq_tables::add_options(cli, options, "--count");
}

std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options)
{
    return std::make_unique<irq_tables::Collector<hardirqs_bpf, hardirqs_key>>(
        cli, options, HARDIRQS_MAX_NAMES,
        irq_tables::Describe<hardirqs_key>{
            "irq:irq_handler_exit", "hardirq", "time in hard IRQ handlers",
            [](const hardirqs_key& key) { return std::string(text_of(key.name)); }});
}

} // namespace tpkit::hardirqs

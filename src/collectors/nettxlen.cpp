// SPDX-License-Identifier: LGPL-2.1-only OR BSD-2-Clause
#include "collectors/nettxlen.hpp"

#include <tpkit/tools/nettxlen.h>
#include "nettxlen.skel.h"

namespace tpkit::nettxlen {

void add_options(Cli& cli, Options& options)
{
    net_hists::add_options(cli, options.net, "packets sent");
    cli.flag("--per-rc", options.per_rc,
             "one histogram per return code of the driver (NETDEV_TX_OK 0, "
             "NETDEV_TX_BUSY 16, or an error)");
}

std::unique_ptr<MetricCollector> open(const Cli& cli, const Options& options)
{
    auto skel = Skeleton<nettxlen_bpf>::open(cli.name());
    net_hists::select_device(*skel, options.net);
    apply_task_filters(*skel, cli.options());
    skel->rodata->per_rc = options.per_rc;

    net_hists::Describe<nettxlen_key> describe{
        "transmitted packet lengths", [options](const nettxlen_key& key) {
            std::vector<Label> labels{{"event", "net:net_dev_xmit"}};
            if (options.net.per_dev)
                labels.push_back({"dev", std::string(text_of(key.dev))});
            if (options.per_rc)
                labels.push_back({"rc", std::to_string(key.rc), true});
            return labels;
        }};
    return std::make_unique<net_hists::Collector<nettxlen_bpf, nettxlen_key>>(
        std::move(skel), options.net.per_dev || options.per_rc, std::move(describe),
        [](auto& loaded) {
            loaded.attach();
            return Link{nullptr, bpf_link__destroy};
        });
}

} // namespace tpkit::nettxlen

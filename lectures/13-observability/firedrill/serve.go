package firedrill

import (
	"context"
	"time"

	"github.com/brew-course/kafka/lectures/13-observability/kitchen"
	"github.com/brew-course/kafka/lectures/13-observability/lag"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// ExporterTimeout bounds one measurement of the lag exporter.
const ExporterTimeout = 3 * time.Second

// ExporterKeepFor is how long the drill's lag exporter serves a group's
// last measurement when a scrape cannot measure it: two scrapes. Without
// it, one slow measurement on a busy machine left the group's series out
// of a scrape, and BrewGroupNoMembers and BrewGroupLagGrowing, pending,
// started their for: again (fired 20 s and 15 s late in a CI run).
const ExporterKeepFor = 10 * time.Second

// Serve is the drill's Exporters: the kitchen's metrics on
// kitchen.MetricsAddr and the lag of group on lag.MetricsAddr, where the
// course's Prometheus scrapes them (jobs brew-apps and brew-lag).
func Serve(ctx context.Context, cfg brewkit.Config, group string, m *kitchen.Metrics) error {
	if err := m.Serve(ctx, kitchen.MetricsAddr); err != nil {
		return err
	}
	// Each scrape measures within ExporterTimeout, under Prometheus'
	// scrape_timeout (4 s): a scrape that times out loses every series.
	c := lag.NewCollector(ctx, cfg, lag.Options{Groups: []string{group}, Timeout: ExporterTimeout, KeepFor: ExporterKeepFor})
	_, err := lag.Serve(ctx, lag.MetricsAddr, c)
	return err
}

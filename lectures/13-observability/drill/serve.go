package drill

import (
	"context"

	"github.com/brew-course/kafka/lectures/13-observability/kitchen"
	"github.com/brew-course/kafka/lectures/13-observability/lag"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// Serve is the drill's Exporters: the kitchen's metrics on
// kitchen.MetricsAddr and the lag of group on lag.MetricsAddr, where the
// course's Prometheus scrapes them (jobs brew-apps and brew-lag).
func Serve(ctx context.Context, cfg brewkit.Config, group string, m *kitchen.Metrics) error {
	if err := m.Serve(ctx, kitchen.MetricsAddr); err != nil {
		return err
	}
	c := lag.NewCollector(ctx, cfg, lag.Options{Groups: []string{group}})
	_, err := lag.Serve(ctx, lag.MetricsAddr, c)
	return err
}

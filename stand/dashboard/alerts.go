package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/brew-course/kafka/pkg/brewkit/stand"
)

// Alert is one alert the course's Prometheus holds: pending (its condition
// holds, its for: has not passed yet) or firing.
type Alert struct {
	Name   string // with the label that tells which: {node=3}, {group=…}
	Firing bool
}

// PrometheusURL is the course's Prometheus (make services-up S=prometheus).
var PrometheusURL = fmt.Sprintf("http://127.0.0.1:%d", stand.PrometheusPort)

// alerts reads the alerts from Prometheus when one answers; with none the
// snapshot has no alerts line (nil), which is not an error: Prometheus is
// lecture 13's, not the cluster's.
func (c *collector) alerts(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, PrometheusURL+"/api/v1/alerts", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil // no Prometheus: nothing to show
	}
	defer resp.Body.Close()
	var body struct {
		Data struct {
			Alerts []struct {
				Labels map[string]string `json:"labels"`
				State  string            `json:"state"`
			} `json:"alerts"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fmt.Errorf("Prometheus' alerts: %w", err)
	}
	c.snap.Alerts = []Alert{} // Prometheus answered: the line shows, "none" if empty
	for _, a := range body.Data.Alerts {
		name := a.Labels["alertname"]
		for _, k := range []string{"node", "group", "topic"} {
			if v, ok := a.Labels[k]; ok {
				name += "{" + k + "=" + v + "}"
				break
			}
		}
		c.snap.Alerts = append(c.snap.Alerts, Alert{Name: name, Firing: a.State == "firing"})
	}
	slices.SortFunc(c.snap.Alerts, func(a, b Alert) int { return strings.Compare(a.Name, b.Name) })
	return nil
}

// alertsLine is the dashboard's alerts line: firing ones first, in red.
func alertsLine(s Snapshot, st styles) string {
	var firing, pending []string
	for _, a := range s.Alerts {
		if a.Firing {
			firing = append(firing, a.Name)
		} else {
			pending = append(pending, a.Name)
		}
	}
	if len(firing)+len(pending) == 0 {
		return "alerts  " + st.good.Render("none") + " (Prometheus)"
	}
	line := "alerts  "
	if len(firing) > 0 {
		line += st.bad.Render("FIRING " + strings.Join(firing, " "))
	}
	if len(pending) > 0 {
		if len(firing) > 0 {
			line += "   "
		}
		line += st.warn.Render("pending " + strings.Join(pending, " "))
	}
	return line
}

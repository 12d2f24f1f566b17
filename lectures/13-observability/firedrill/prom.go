package firedrill

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Prom is the little of Prometheus' HTTP API the drill reads.
type Prom struct {
	URL string // http://127.0.0.1:19090
	hc  http.Client
}

// NewProm returns a client of the Prometheus at base.
func NewProm(base string) *Prom { return &Prom{URL: base, hc: http.Client{Timeout: 5 * time.Second}} }

// Alert is one alert Prometheus holds: pending (its condition holds, its
// for: has not passed) or firing.
type Alert struct {
	Name   string
	State  string // pending or firing
	Labels map[string]string
}

func (p *Prom) get(ctx context.Context, path string, q url.Values, out any) error {
	u := p.URL + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		return fmt.Errorf("Prometheus does not answer on %s (`make services-up S=prometheus` starts it): %w", p.URL, err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fmt.Errorf("Prometheus %s: %s: %w", path, resp.Status, err)
	}
	if body.Status != "success" {
		return fmt.Errorf("Prometheus %s: %s", path, body.Error)
	}
	return json.Unmarshal(body.Data, out)
}

// Alerts returns the alerts pending or firing now.
func (p *Prom) Alerts(ctx context.Context) ([]Alert, error) {
	var data struct {
		Alerts []struct {
			Labels map[string]string `json:"labels"`
			State  string            `json:"state"`
		} `json:"alerts"`
	}
	if err := p.get(ctx, "/api/v1/alerts", nil, &data); err != nil {
		return nil, err
	}
	var out []Alert
	for _, a := range data.Alerts {
		out = append(out, Alert{Name: a.Labels["alertname"], State: a.State, Labels: a.Labels})
	}
	return out, nil
}

// AlertRules returns the names of the alerting rules Prometheus loaded.
func (p *Prom) AlertRules(ctx context.Context) ([]string, error) {
	var data struct {
		Groups []struct {
			Rules []struct {
				Name string `json:"name"`
				Type string `json:"type"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := p.get(ctx, "/api/v1/rules", url.Values{"type": {"alert"}}, &data); err != nil {
		return nil, err
	}
	var out []string
	for _, g := range data.Groups {
		for _, r := range g.Rules {
			out = append(out, r.Name)
		}
	}
	return out, nil
}

// Target is one scrape target and whether its last scrape worked.
type Target struct {
	Job, Instance string
	Labels        map[string]string
	Up            bool
	LastError     string
}

// Targets returns the active scrape targets.
func (p *Prom) Targets(ctx context.Context) ([]Target, error) {
	var data struct {
		Active []struct {
			Labels    map[string]string `json:"labels"`
			Health    string            `json:"health"`
			LastError string            `json:"lastError"`
		} `json:"activeTargets"`
	}
	if err := p.get(ctx, "/api/v1/targets", url.Values{"state": {"active"}}, &data); err != nil {
		return nil, err
	}
	var out []Target
	for _, t := range data.Active {
		out = append(out, Target{Job: t.Labels["job"], Instance: t.Labels["instance"], Labels: t.Labels, Up: t.Health == "up", LastError: t.LastError})
	}
	return out, nil
}

// Sample is one value of a series at a time.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Query evaluates an instant PromQL query now.
func (p *Prom) Query(ctx context.Context, q string) ([]Sample, error) {
	var data struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	}
	if err := p.get(ctx, "/api/v1/query", url.Values{"query": {q}}, &data); err != nil {
		return nil, err
	}
	var out []Sample
	for _, r := range data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("Prometheus query %q: value %v: %w", q, r.Value[1], err)
		}
		out = append(out, Sample{Labels: r.Metric, Value: v})
	}
	return out, nil
}

// Series is one series of a range query.
type Series struct {
	Labels map[string]string
	Points []Point
}

// Point is a value at a time.
type Point struct {
	At    time.Time
	Value float64
}

// QueryRange evaluates q at every step from start to end.
func (p *Prom) QueryRange(ctx context.Context, q string, start, end time.Time, step time.Duration) ([]Series, error) {
	var data struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"`
		} `json:"result"`
	}
	v := url.Values{
		"query": {q},
		"start": {strconv.FormatFloat(float64(start.UnixMilli())/1000, 'f', 3, 64)},
		"end":   {strconv.FormatFloat(float64(end.UnixMilli())/1000, 'f', 3, 64)},
		"step":  {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)},
	}
	if err := p.get(ctx, "/api/v1/query_range", v, &data); err != nil {
		return nil, err
	}
	var out []Series
	for _, r := range data.Result {
		s := Series{Labels: r.Metric}
		for _, pv := range r.Values {
			ts, _ := pv[0].(float64)
			vs, _ := pv[1].(string)
			f, err := strconv.ParseFloat(vs, 64)
			if err != nil {
				continue
			}
			s.Points = append(s.Points, Point{At: time.UnixMilli(int64(ts * 1000)), Value: f})
		}
		out = append(out, s)
	}
	return out, nil
}

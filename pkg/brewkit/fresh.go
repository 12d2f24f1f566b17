package brewkit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Fresh describes a topic of its own for one run of a demo or a test.
type Fresh struct {
	// Prefix starts the name and a random number ends it: "brew.acks."
	// gives brew.acks.482113 (make reset-lecture deletes leftovers by prefix).
	Prefix     string
	Partitions int32
	RF         int16             // replication factor; 0 is the course's 3
	Configs    map[string]string // topic configs; retention.ms is an hour unless set here
}

// FreshTopic creates the topic f describes under a name no other run uses,
// and waits until every replica has its partitions. It returns the name and
// drop, which deletes the topic: a program defers drop(ctx), a test calls it
// from t.Cleanup. drop still works once ctx is cancelled (Ctrl-C), for up to
// 10 s. On an error FreshTopic leaves nothing behind.
func FreshTopic(ctx context.Context, adm *kadm.Client, f Fresh) (name string, drop func(context.Context) error, err error) {
	if name, err = createFresh(ctx, adm, f); err != nil {
		return "", nil, err
	}
	drop = func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		resp, err := adm.DeleteTopic(ctx, name)
		if err == nil {
			err = resp.Err
		}
		if err != nil {
			return fmt.Errorf("deleting %s: %w", name, err)
		}
		return nil
	}
	if err := WaitTopics(ctx, adm, name); err != nil {
		drop(ctx) //nolint:errcheck // the wait's error is the one to report
		return "", nil, err
	}
	return name, drop, nil
}

// createFresh creates the topic under a random name, and under another one
// if a topic of that name exists already (a leftover of another run).
func createFresh(ctx context.Context, adm *kadm.Client, f Fresh) (string, error) {
	rf := f.RF
	if rf == 0 {
		rf = 3
	}
	hour := strconv.FormatInt(time.Hour.Milliseconds(), 10)
	configs := map[string]*string{"retention.ms": &hour}
	for k, v := range f.Configs {
		configs[k] = &v
	}
	for tries := 1; ; tries++ {
		name := f.Prefix + strconv.Itoa(rand.IntN(1e6))
		resp, err := adm.CreateTopic(ctx, f.Partitions, rf, configs, name)
		if err == nil {
			err = resp.Err
		}
		switch {
		case err == nil:
			return name, nil
		case errors.Is(err, kerr.TopicAlreadyExists) && tries < 3:
		default:
			return "", fmt.Errorf("creating %s%s: %w", name, withConfigs(f.Configs), err)
		}
	}
}

// withConfigs says " with k=v ..." for the configs a caller set, in order.
func withConfigs(configs map[string]string) string {
	if len(configs) == 0 {
		return ""
	}
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(configs)) {
		kv = append(kv, k+"="+configs[k])
	}
	return " with " + strings.Join(kv, " ")
}

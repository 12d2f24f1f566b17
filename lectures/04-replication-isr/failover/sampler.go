package failover

import (
	"context"
	"sync"
	"time"
)

// sampler records the drilled partition's leader and ISR and the orders
// acknowledged so far, every quarter second, for the drill's timeline.
type sampler struct {
	d       *drill
	cancel  context.CancelFunc
	done    chan struct{}
	once    sync.Once
	samples []Sample
}

// sampleEvery is how often the timeline is sampled.
const sampleEvery = 250 * time.Millisecond

func startSampler(ctx context.Context, d *drill) *sampler {
	ctx, cancel := context.WithCancel(ctx)
	s := &sampler{d: d, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(sampleEvery)
		defer tick.Stop()
		for {
			s.sample(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// sample reads the partition once. A reading the metadata does not answer
// (a node in the middle of leaving) is left out: the timeline goes on from
// the last one.
func (s *sampler) sample(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	p, err := s.d.partition(ctx)
	if err != nil {
		return
	}
	s.samples = append(s.samples, Sample{At: time.Since(s.d.start), Leader: p.Leader, ISR: p.ISR, Acked: s.d.tally.ackedCount()})
}

// stop ends the sampling with one last sample, taken once the producer is
// stopped, and returns the samples; it may be called twice.
func (s *sampler) stop() []Sample {
	s.once.Do(func() {
		s.cancel()
		<-s.done
		s.sample(context.Background())
	})
	return s.samples
}

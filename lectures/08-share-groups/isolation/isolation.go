// Package isolation shows what a share group's share.isolation.level
// changes: tickets written in transactions, one of them aborted, are read by
// two share groups, one with read_uncommitted (Kafka's default), which
// delivers the aborted tickets too, and one with read_committed, which
// delivers only the committed ones.
package isolation

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/pkg/brewkit"

	"github.com/brew-course/kafka/lectures/08-share-groups/groupconfigs"
	"github.com/brew-course/kafka/lectures/08-share-groups/queue"
)

// The two isolation levels of a share group (its config
// share.isolation.level).
const (
	ReadUncommitted = "read_uncommitted"
	ReadCommitted   = "read_committed"
)

// Levels are the groups a run reads with, in the order it prints them.
var Levels = []string{ReadUncommitted, ReadCommitted}

// Config is one run.
type Config struct {
	Transactions int // each writes PerTxn tickets
	PerTxn       int
	Abort        int // the transaction aborted (numbered from 1)
}

// Defaults: three transactions of two tickets, the second aborted.
var Defaults = Config{Transactions: 3, PerTxn: 2, Abort: 2}

// Ticket is one ticket written and the transaction it was written in.
type Ticket struct {
	Number    int  `json:"ticket"`
	Txn       int  `json:"transaction"`
	Committed bool `json:"committed"`
}

// Group is one share group and what it delivered.
type Group struct {
	Name string `json:"group"`
	// Level is the group's share.isolation.level as the cluster describes
	// it after the run set it, and Source where that value comes from
	// (GROUP_CONFIG: set on the group itself).
	Level     string `json:"isolation_level"`
	Source    string `json:"source"`
	Delivered []int  `json:"delivered"` // ticket numbers, in delivery order
}

// Has reports whether the group delivered ticket n.
func (g Group) Has(n int) bool { return slices.Contains(g.Delivered, n) }

// Result is a run's outcome.
type Result struct {
	Config  Config   `json:"config"`
	Topic   string   `json:"topic"`
	Tickets []Ticket `json:"tickets"`
	Groups  []Group  `json:"groups"` // in the order of Levels
}

// Committed returns the numbers of the tickets whose transaction committed.
func (r Result) Committed() []int {
	var out []int
	for _, t := range r.Tickets {
		if t.Committed {
			out = append(out, t.Number)
		}
	}
	return out
}

// All returns the number of every ticket written.
func (r Result) All() []int {
	var out []int
	for _, t := range r.Tickets {
		out = append(out, t.Number)
	}
	return out
}

// Run writes the tickets to a fresh one-partition topic in transactions,
// then reads them with one share group per isolation level, each starting
// at the earliest offset, until it has delivered the last ticket.
func Run(ctx context.Context, cfg brewkit.Config, c Config, say func(string)) (Result, error) {
	res := Result{Config: c}
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	var drop func(context.Context) error
	if res.Topic, drop, err = brewkit.FreshTopic(ctx, adm, brewkit.Fresh{Prefix: "brew.tickets.isolation.", Partitions: 1}); err != nil {
		return res, err
	}
	var groups []string
	for _, l := range Levels {
		groups = append(groups, res.Topic+"."+l)
	}
	defer func() {
		drop(ctx) //nolint:errcheck // leftovers are harmless
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		adm.DeleteGroups(dctx, groups...) //nolint:errcheck // and so are the groups
	}()

	if res.Tickets, err = write(ctx, cfg, res.Topic, c); err != nil {
		return res, err
	}
	say(fmt.Sprintf("%d tickets in %s, %d transactions, transaction %d aborted; reading with %s",
		len(res.Tickets), res.Topic, c.Transactions, c.Abort, strings.Join(Levels, " and ")))

	for i, l := range Levels {
		g := Group{Name: groups[i]}
		if err := groupconfigs.Set(ctx, cl, g.Name, map[string]string{
			"share.auto.offset.reset": "earliest",
			"share.isolation.level":   l,
		}); err != nil {
			return res, err
		}
		cs, err := groupconfigs.Describe(ctx, cl, g.Name)
		if err != nil {
			return res, err
		}
		lc, _ := groupconfigs.Lookup(cs, "share.isolation.level")
		g.Level, g.Source = lc.Value, lc.Source
		res.Groups = append(res.Groups, g)
	}

	last := res.Tickets[len(res.Tickets)-1].Number // in a committed transaction
	var wg sync.WaitGroup
	errs := make([]error, len(res.Groups))
	for i := range res.Groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res.Groups[i].Delivered, errs[i] = read(ctx, cfg, res.Groups[i].Name, res.Topic, last)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// write writes the tickets, PerTxn per transaction, and aborts transaction
// c.Abort. Each write and each end of a transaction waits at most
// cfg.Bound() for the brokers.
func write(ctx context.Context, cfg brewkit.Config, topic string, c Config) ([]Ticket, error) {
	tx, err := brewkit.NewClient(cfg, brewkit.TransactionalID(topic+".register"))
	if err != nil {
		return nil, err
	}
	defer tx.Close()
	var out []Ticket
	for n := 1; n <= c.Transactions; n++ {
		commit := n != c.Abort
		first := (n-1)*c.PerTxn + 1
		if err := tx.BeginTransaction(); err != nil {
			return out, fmt.Errorf("transaction %d: %w", n, err)
		}
		end := kgo.TryCommit
		if !commit {
			end = kgo.TryAbort
		}
		err := produce(ctx, cfg, tx, queue.NewTickets(topic, first, c.PerTxn))
		if err == nil {
			err = within(ctx, cfg, func(ctx context.Context) error { return tx.EndTransaction(ctx, end) })
		}
		if err != nil {
			return out, fmt.Errorf("transaction %d, writing tickets to %s: %w", n, topic, err)
		}
		for i := range c.PerTxn {
			out = append(out, Ticket{Number: first + i, Txn: n, Committed: commit})
		}
	}
	return out, nil
}

// produce writes recs in tx's open transaction and waits, up to
// cfg.Bound(), for every acknowledgement. (ProduceSync would wait past its
// context: a transactional record in flight cannot be cancelled, so the
// bound is on Flush.)
func produce(ctx context.Context, cfg brewkit.Config, tx *kgo.Client, recs []*kgo.Record) error {
	var mu sync.Mutex
	var first error
	for _, r := range recs {
		tx.Produce(ctx, r, func(_ *kgo.Record, err error) {
			mu.Lock()
			defer mu.Unlock()
			if first == nil {
				first = err
			}
		})
	}
	if err := within(ctx, cfg, tx.Flush); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	return first
}

// within runs fn with a context that ends after cfg.Bound(), and names the
// bound when it is what ended it.
func within(ctx context.Context, cfg brewkit.Config, fn func(context.Context) error) error {
	bctx, cancel := context.WithTimeout(ctx, cfg.Bound())
	defer cancel()
	err := fn(bctx)
	if err != nil && ctx.Err() == nil && bctx.Err() != nil {
		return fmt.Errorf("no acknowledgement within %s=%s (is a node paused or overloaded? `make status` shows the nodes)", brewkit.EnvTimeout, cfg.Bound())
	}
	return err
}

// read is one share consumer of group: it accepts every ticket it gets
// until ticket last. On one partition a consumer alone in its group gets the
// records in offset order, so every ticket the group delivers comes before
// the last one.
func read(ctx context.Context, cfg brewkit.Config, group, topic string, last int) ([]int, error) {
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	var got []int
	done := false
	err := make(chan error, 1)
	go func() {
		err <- queue.Serve(rctx, cfg, group, topic, 10, func(r *kgo.Record) kgo.AckStatus {
			n := queue.Ticket(r)
			got = append(got, n)
			if n == last {
				done = true
				stop()
			}
			return kgo.AckAccept
		})
	}()
	wait := time.Minute
	select {
	case e := <-err:
		if e != nil {
			return got, fmt.Errorf("share group %s: %w", group, e)
		}
		if !done {
			return got, ctx.Err()
		}
		return got, nil
	case <-time.After(wait):
		stop()
		<-err
		return got, fmt.Errorf("share group %s delivered tickets %v but not ticket %d within %s", group, got, last, wait)
	}
}

// Print writes which group delivered which ticket.
func (r Result) Print(w io.Writer) {
	fmt.Fprintf(w, "%d tickets in %s: %d transactions of %d, transaction %d aborted\n\n",
		len(r.Tickets), r.Topic, r.Config.Transactions, r.Config.PerTxn, r.Config.Abort)
	head := []string{"TICKET", "TXN", "OUTCOME"}
	for _, l := range Levels {
		head = append(head, strings.ToUpper(l))
	}
	t := brewkit.NewTable(w, head...)
	for _, tk := range r.Tickets {
		outcome := "aborted"
		if tk.Committed {
			outcome = "committed"
		}
		row := []any{tk.Number, tk.Txn, outcome}
		for _, g := range r.Groups {
			mark := "-"
			if g.Has(tk.Number) {
				mark = "delivered"
			}
			row = append(row, mark)
		}
		t.Row(row...)
	}
	t.Flush()
	fmt.Fprintln(w)
	for _, g := range r.Groups {
		fmt.Fprintf(w, "%s: share.isolation.level=%s (%s), %d tickets delivered\n", g.Name, g.Level, g.Source, len(g.Delivered))
	}
}

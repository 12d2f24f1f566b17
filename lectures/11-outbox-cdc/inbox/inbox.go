// Package inbox is the consuming side of the outbox: kitchen-service, with
// its own database, cooking each OrderPlaced event into a ticket. The outbox
// delivers at least once (a relay killed after Kafka's ack sends its batch
// again), and a consumer killed between its database commit and its offset
// commit gets its last batch again. With the offset alone as its defence
// the kitchen cooks those twice; with an inbox, the processed event ids
// stored in the same transaction as the tickets, it never does.
package inbox

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/outbox"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// Options set up the demo.
type Options struct {
	Outbox  outbox.Options // the input: orders through the outbox, relays killed
	Schema  string         // kitchen-service's schema (reset by Run)
	Kills   int            // kitchen processes killed in each mode
	Batch   int            // records per poll
	Seed    uint64         // the kill points
	Run     string
	Command []string // this program: Command + "kitchen" (and the outbox's subcommands)
	// Progress, when set, gets a line per process.
	Progress func(string)
}

// Defaults are the lecture's demo: 100 orders, three relay kills (one at
// each step: two batches of 10 sent again), three kitchen kills.
var Defaults = Options{
	Outbox: func() outbox.Options {
		o := outbox.Defaults
		o.Orders, o.WriterKills, o.RelayKills = 100, 0, 3
		return o
	}(),
	Schema: "kitchen", Kills: 3, Batch: 10, Seed: 5,
}

// Row is one kitchen's run.
type Row struct {
	Mode        Mode
	Kills       int
	Read        int // records received, over every process
	Redelivered int // Read minus the records in the topic: the batches killed kitchens got again
	Tickets     int
	Orders      int // distinct orders with a ticket
	CookedTwice int // orders with more than one ticket
	NotCooked   int // committed orders with no ticket
	Skipped     int // events the inbox skipped
}

// Result is the demo's table.
type Result struct {
	Input outbox.Result
	Rows  []Row
}

// Run sends the orders through the outbox (outbox.Run), then, for each
// kitchen, runs kitchen processes in a group of its own from the run's
// start, killing each at a seeded point between its database commit and its
// offset commit, until every record is read and committed, and counts the
// tickets.
func Run(ctx context.Context, cfg brewkit.Config, o Options) (Result, error) {
	var res Result
	o.Outbox.Run, o.Outbox.Command, o.Outbox.Progress = o.Run+"-orders", o.Command, o.Progress
	in, err := outbox.Run(ctx, cfg, o.Outbox)
	res.Input = in
	if err != nil {
		return res, err
	}
	p, err := db.Connect(ctx)
	if err != nil {
		return res, err
	}
	defer p.Close()
	if err := db.ResetSchema(ctx, p, o.Schema, DDL...); err != nil {
		return res, err
	}
	cl, adm, err := brewkit.Connect(ctx, cfg)
	if err != nil {
		return res, err
	}
	defer cl.Close()
	start := kadm.Offsets{}
	for part, at := range in.From {
		start.AddOffset(o.Outbox.Topic, part, at, -1)
	}
	// Each kitchen process reads this many records, then is killed after the
	// batch that reaches it.
	kills := drill.Points(o.Seed, o.Kills, o.Batch/2+1, 3*o.Batch)
	for _, m := range Modes {
		group := "brew.outbox.kitchen-" + o.Run + "-" + string(m)
		if _, err := adm.CommitOffsets(ctx, group, start); err != nil {
			return res, fmt.Errorf("starting group %s at the run's start in %s: %w", group, o.Outbox.Topic, err)
		}
		row := Row{Mode: m}
		for _, k := range append(slices.Clone(kills), 0) {
			args := []string{"-mode", string(m), "-schema", o.Schema, "-topic", o.Outbox.Topic, "-group", group,
				"-batch", strconv.Itoa(o.Batch), "-kill-after", strconv.Itoa(k)}
			killed, out, err := drill.ChildOutput(ctx, cfg, append(slices.Clone(o.Command), "kitchen"), args...)
			if err != nil {
				return res, fmt.Errorf("kitchen (%s): %w", m, err)
			}
			if killed != (k > 0) {
				return res, fmt.Errorf("kitchen (%s): killed %v, with kill point %d", m, killed, k)
			}
			read, err := tally(&row, out)
			if err != nil {
				return res, fmt.Errorf("kitchen (%s): %w", m, err)
			}
			if killed {
				row.Kills++
				o.progress("kitchen (%s): %d records cooked and committed to PostgreSQL, killed -9 before the offset commit", m.Says(), read)
			} else {
				o.progress("kitchen (%s): %d records, all committed", m.Says(), read)
			}
		}
		row.Redelivered = row.Read - in.Events
		if err := count(ctx, p, o.Schema, o.Outbox.Schema, &row); err != nil {
			return res, err
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

func (o Options) progress(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, args...))
	}
}

// tally adds a kitchen process's reports to row and returns the records it read.
func tally(row *Row, out []byte) (int, error) {
	read := 0
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l == "" {
			continue
		}
		var b Batch
		if err := json.Unmarshal([]byte(l), &b); err != nil {
			return read, fmt.Errorf("a report %q: %w", l, err)
		}
		read += b.Read
		row.Read += b.Read
		row.Skipped += b.Skipped
	}
	return read, nil
}

// count reads row's tickets from the kitchen's schema, and the orders it
// should have cooked from order-service's.
func count(ctx context.Context, p *pgxpool.Pool, kitchen, orders string, row *Row) error {
	tickets := pgx.Identifier{kitchen, "tickets"}.Sanitize()
	err := p.QueryRow(ctx, `SELECT count(*), count(DISTINCT order_id) FROM `+tickets+` WHERE kitchen = $1`,
		string(row.Mode)).Scan(&row.Tickets, &row.Orders)
	if err != nil {
		return err
	}
	err = p.QueryRow(ctx, `SELECT count(*) FROM (SELECT order_id FROM `+tickets+` WHERE kitchen = $1
		GROUP BY order_id HAVING count(*) > 1) twice`, string(row.Mode)).Scan(&row.CookedTwice)
	if err != nil {
		return err
	}
	return p.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{orders, "orders"}.Sanitize()+` o
		WHERE NOT EXISTS (SELECT 1 FROM `+tickets+` t WHERE t.kitchen = $1 AND t.order_id = o.order_id)`,
		string(row.Mode)).Scan(&row.NotCooked)
}

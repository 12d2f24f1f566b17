// A plausible wrong solution of exercise 11/inboxdedup: it looks the event
// id up in the inbox first and writes the ticket and the id after, in one
// transaction. One kitchen at a time never cooks twice; two at once (a
// rebalance's old and new owner of a partition) both find the id missing,
// since neither has committed, and both cook. The grader must fail it.
package inboxdedup

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill"
	"github.com/brew-course/kafka/pkg/brewkit"
)

func Cook(ctx context.Context, p *pgxpool.Pool, cl *kgo.Client, consumer string, recs []*kgo.Record) error {
	for _, r := range recs {
		ev, err := brewkit.DecodeEvent(r)
		if err != nil {
			return err
		}
		id := drill.EventID(r)
		var seen bool
		if err := p.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM inbox WHERE consumer = $1 AND event_id = $2)`, consumer, id).Scan(&seen); err != nil {
			return err
		}
		if seen {
			continue
		}
		err = pgx.BeginFunc(ctx, p, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `INSERT INTO tickets (kitchen, order_id, shop_id, items, event_id) VALUES ($1, $2, $3, $4, $5)`,
				consumer, ev.OrderID, ev.ShopID, ev.Items, id); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO inbox (consumer, event_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, consumer, id)
			return err
		})
		if err != nil {
			return err
		}
	}
	return cl.CommitRecords(ctx, recs...)
}

// A plausible wrong solution of exercise 11/inboxdedup: the inbox is right,
// but the offsets are committed first ("so a crash never cooks twice"):
// when the tickets' transaction then fails, the batch is never delivered
// again and its orders are never cooked. The grader must fail it.
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
	if err := cl.CommitRecords(ctx, recs...); err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, p, func(tx pgx.Tx) error {
		for _, r := range recs {
			ev, err := brewkit.DecodeEvent(r)
			if err != nil {
				return err
			}
			id := drill.EventID(r)
			tag, err := tx.Exec(ctx, `INSERT INTO inbox (consumer, event_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, consumer, id)
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 0 {
				continue
			}
			if _, err := tx.Exec(ctx, `INSERT INTO tickets (kitchen, order_id, shop_id, items, event_id) VALUES ($1, $2, $3, $4, $5)`,
				consumer, ev.OrderID, ev.ShopID, ev.Items, id); err != nil {
				return err
			}
		}
		return nil
	})
}

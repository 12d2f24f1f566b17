// The reference solution of exercise 11/inboxdedup.
package inboxdedup

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// Cook claims each event id in the inbox and writes its ticket in one
// transaction: the INSERT ... ON CONFLICT DO NOTHING inserts nothing for an
// id that is there, and waits for a transaction that is inserting it right
// now (another kitchen with the same batch), so a ticket is written only by
// the one that claimed the id. Then, and only then, the offsets: a batch
// whose transaction failed comes again.
func Cook(ctx context.Context, p *pgxpool.Pool, cl *kgo.Client, consumer string, recs []*kgo.Record) error {
	err := pgx.BeginFunc(ctx, p, func(tx pgx.Tx) error {
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
				continue // cooked before: its ticket is there
			}
			if _, err := tx.Exec(ctx, `INSERT INTO tickets (kitchen, order_id, shop_id, items, event_id) VALUES ($1, $2, $3, $4, $5)`,
				consumer, ev.OrderID, ev.ShopID, ev.Items, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return cl.CommitRecords(ctx, recs...)
}

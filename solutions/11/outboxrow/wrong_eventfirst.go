// A plausible wrong solution of exercise 11/outboxrow: "the event first, so
// it is never lost": the outbox row, then the order, each committed on its
// own. An order PostgreSQL refuses leaves its event behind, which the relay
// publishes: the kitchen cooks an order that does not exist. The grader
// must fail it.
package outboxrow

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/brew-course/kafka/pkg/brewkit"
)

func PlaceOrder(ctx context.Context, p *pgxpool.Pool, ev brewkit.Event) error {
	payload, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	if _, err := p.Exec(ctx, `INSERT INTO outbox (aggregate_id, type, payload) VALUES ($1, $2, $3)`,
		ev.OrderID, string(ev.Type), payload); err != nil {
		return err
	}
	_, err = p.Exec(ctx, `INSERT INTO orders (order_id, run, shop_id, items, total_cents, placed_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, ev.OrderID, ev.Run, ev.ShopID, ev.Items, ev.Cents, ev.At)
	return err
}

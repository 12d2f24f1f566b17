package cdc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// Plugin is the logical decoding plugin: pgoutput, built into PostgreSQL
// (10+), the one Debezium uses too.
const Plugin = "pgoutput"

// Capture sets up what a WAL reader of schema's outbox needs: a publication
// on the outbox table (what pgoutput sends) and a logical replication slot
// (where the reader is in the WAL; PostgreSQL keeps every WAL segment from
// the slot's position on). The slot is created now: what commits from here
// on is kept for the reader, whether it runs or not.
func Capture(ctx context.Context, p *pgxpool.Pool, schema, publication, slot string) error {
	if err := Release(ctx, p, publication, slot); err != nil {
		return err
	}
	table := pgx.Identifier{schema, "outbox"}.Sanitize()
	if _, err := p.Exec(ctx, "CREATE PUBLICATION "+pgx.Identifier{publication}.Sanitize()+" FOR TABLE "+table); err != nil {
		return fmt.Errorf("creating publication %s: %w", publication, err)
	}
	if _, err := p.Exec(ctx, "SELECT pg_create_logical_replication_slot($1, $2)", slot, Plugin); err != nil {
		return fmt.Errorf("creating slot %s: %w", slot, err)
	}
	return nil
}

// Release drops slot and publication when they exist, waiting up to 10 s
// for the slot to be let go by a reader that just ended.
func Release(ctx context.Context, p *pgxpool.Pool, publication, slot string) error {
	if slot != "" {
		err := brewkit.WaitFor(ctx, 10*time.Second, 50*time.Millisecond, func() bool {
			st, err := Slot(ctx, p, slot)
			return err != nil || !st.Exists || !st.Active
		})
		if err != nil {
			st, _ := Slot(ctx, p, slot)
			return fmt.Errorf("slot %s is still in use by process %d: another reader streams from it", slot, st.PID)
		}
		if _, err := DropSlot(ctx, p, slot); err != nil && !errors.Is(err, errNoSlot) {
			return err
		}
	}
	if publication != "" {
		if _, err := p.Exec(ctx, "DROP PUBLICATION IF EXISTS "+pgx.Identifier{publication}.Sanitize()); err != nil {
			return fmt.Errorf("dropping publication %s: %w", publication, err)
		}
	}
	return nil
}

var errNoSlot = errors.New("no such slot")

// DropSlot runs pg_drop_replication_slot. PostgreSQL refuses while a reader
// streams from the slot (SQLSTATE 55006, object in use): the error is
// returned, with the code in it.
func DropSlot(ctx context.Context, p *pgxpool.Pool, slot string) (string, error) {
	_, err := p.Exec(ctx, "SELECT pg_drop_replication_slot($1)", slot)
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		return "", nil
	case errors.As(err, &pgErr) && pgErr.Code == "42704":
		return pgErr.Code, errNoSlot
	case errors.As(err, &pgErr):
		return pgErr.Code, fmt.Errorf("ERROR %s %s", pgErr.Code, pgErr.Message)
	}
	return "", err
}

// SlotState is a slot as pg_replication_slots shows it.
type SlotState struct {
	Exists bool
	Active bool  // a reader streams from it
	PID    int32 // the walsender serving that reader
	// Lag is pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn):
	// the bytes of WAL written since what the reader acknowledged.
	Lag int64
	// Retained is pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn): the
	// WAL PostgreSQL may not recycle for this slot.
	Retained int64
	// Confirmed is confirmed_flush_lsn, as pg_lsn text.
	Confirmed string
	// WALStatus is wal_status: reserved, extended, unreserved or lost.
	WALStatus string
}

// Slot reads slot's row of pg_replication_slots.
func Slot(ctx context.Context, p *pgxpool.Pool, slot string) (SlotState, error) {
	var st SlotState
	var pid *int32
	var confirmed, walStatus *string
	var lag, retained *int64
	err := p.QueryRow(ctx, `SELECT active, active_pid,
			pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint,
			pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint,
			confirmed_flush_lsn::text, wal_status
		FROM pg_replication_slots WHERE slot_name = $1`, slot).Scan(&st.Active, &pid, &lag, &retained, &confirmed, &walStatus)
	if errors.Is(err, pgx.ErrNoRows) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("reading slot %s: %w", slot, err)
	}
	st.Exists = true
	if pid != nil {
		st.PID = *pid
	}
	if lag != nil {
		st.Lag = *lag
	}
	if retained != nil {
		st.Retained = *retained
	}
	if confirmed != nil {
		st.Confirmed = *confirmed
	}
	if walStatus != nil {
		st.WALStatus = *walStatus
	}
	return st, nil
}

// CurrentLSN is pg_current_wal_lsn(): where the WAL ends now.
func CurrentLSN(ctx context.Context, p *pgxpool.Pool) (string, error) {
	var lsn string
	err := p.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&lsn)
	return lsn, err
}

// CaughtUp reports whether slot's reader acknowledged everything up to lsn.
func CaughtUp(ctx context.Context, p *pgxpool.Pool, slot, lsn string) (bool, error) {
	var ok *bool
	err := p.QueryRow(ctx, "SELECT confirmed_flush_lsn >= $2::pg_lsn FROM pg_replication_slots WHERE slot_name = $1", slot, lsn).Scan(&ok)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, fmt.Errorf("slot %s does not exist", slot)
	}
	return ok != nil && *ok, err
}

// replicationConfig is the connection of a WAL reader: the DSN's database
// in replication=database mode (the walsender protocol).
func replicationConfig() (*pgconn.Config, error) {
	cfg, err := pgconn.ParseConfig(db.DSN())
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL at %s: %w", db.DSN(), err)
	}
	cfg.RuntimeParams["replication"] = "database"
	return cfg, nil
}

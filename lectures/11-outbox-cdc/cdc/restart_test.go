package cdc_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/cdc"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db"
	"github.com/brew-course/kafka/lectures/11-outbox-cdc/db/dbtest"
	"github.com/brew-course/kafka/pkg/brewkit/brewtest"
)

// slotLSNs is a slot's two positions as pg_replication_slots shows them,
// and the WAL it retains (pg_current_wal_lsn() - restart_lsn).
type slotLSNs struct {
	Restart, Confirmed pglogrepl.LSN
	Retained           int64
}

// restartProbe reads and consumes one slot with SQL: the consumer of this
// test is pg_logical_slot_get_binary_changes (pgoutput), which confirms
// everything it read.
type restartProbe struct {
	t       *testing.T
	ctx     context.Context
	p       *pgxpool.Pool
	slot    string
	version int
}

func (r restartProbe) lsn(q pgx.Row) pglogrepl.LSN {
	r.t.Helper()
	var s string
	require.NoError(r.t, q.Scan(&s))
	l, err := pglogrepl.ParseLSN(s)
	require.NoError(r.t, err)
	return l
}

// insertLSN is where the next WAL record goes.
func (r restartProbe) insertLSN() pglogrepl.LSN {
	r.t.Helper()
	return r.lsn(r.p.QueryRow(r.ctx, "SELECT pg_current_wal_insert_lsn()::text"))
}

// runningXacts has PostgreSQL write an xl_running_xacts record now (the
// bgwriter writes one every 15 s): pg_log_standby_snapshot on 16+, a
// checkpoint on 15. The record starts in [from, to).
func (r restartProbe) runningXacts() (from, to pglogrepl.LSN) {
	r.t.Helper()
	from = r.insertLSN()
	if r.version >= 160000 {
		to = r.lsn(r.p.QueryRow(r.ctx, "SELECT pg_log_standby_snapshot()::text"))
	} else {
		_, err := r.p.Exec(r.ctx, "CHECKPOINT")
		require.NoError(r.t, err)
		to = r.insertLSN()
	}
	return from, to
}

// consume decodes the slot up to the end of the flushed WAL and confirms
// it; it returns each row's (lsn, xid). The BEGIN of a transaction comes
// with the LSN of its first change.
func (r restartProbe) consume() [][2]string {
	r.t.Helper()
	rows, err := r.p.Query(r.ctx, `SELECT lsn::text, xid::text FROM pg_logical_slot_get_binary_changes($1::name, NULL, NULL,
		'proto_version', '1', 'publication_names', $1::text)`, r.slot)
	require.NoError(r.t, err)
	var out [][2]string
	for rows.Next() {
		var lsn, xid string
		require.NoError(r.t, rows.Scan(&lsn, &xid))
		out = append(out, [2]string{lsn, xid})
	}
	require.NoError(r.t, rows.Err())
	return out
}

func (r restartProbe) state() slotLSNs {
	r.t.Helper()
	var restart, confirmed string
	var st slotLSNs
	require.NoError(r.t, r.p.QueryRow(r.ctx, `SELECT restart_lsn::text, confirmed_flush_lsn::text,
			pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint
		FROM pg_replication_slots WHERE slot_name = $1`, r.slot).Scan(&restart, &confirmed, &st.Retained))
	var err error
	st.Restart, err = pglogrepl.ParseLSN(restart)
	require.NoError(r.t, err)
	st.Confirmed, err = pglogrepl.ParseLSN(confirmed)
	require.NoError(r.t, err)
	return st
}

// A transaction left open on another connection (it inserted an outbox row
// and neither commits nor aborts) holds the slot's restart_lsn at or before
// its first LSN, while the consumer goes on confirming the transactions
// that commit after it: confirmed_flush_lsn moves past that first LSN, the
// decoder passes xl_running_xacts records that would have moved
// restart_lsn (they do, with no transaction open), and the WAL the slot
// retains grows by at least what the committed transactions wrote. Decoding
// must start again where the open transaction's changes are, since the
// reorder buffer emits it whole at its commit. Once it commits and the
// consumer confirmed past it, restart_lsn moves past its first LSN.
func TestOpenTransactionHoldsRestartLSN(t *testing.T) {
	schema := dbtest.Schema(t, "cdc_open")
	slot := slotFor(t, "cdc_open")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := db.Connect(ctx)
	require.NoError(t, err)
	t.Cleanup(p.Close) // after the open transaction's rollback below
	require.NoError(t, db.ResetSchema(ctx, p, schema, cdc.DDL...))
	require.NoError(t, cdc.Capture(ctx, p, schema, slot, slot))
	r := restartProbe{t: t, ctx: ctx, p: p, slot: slot}
	require.NoError(t, p.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&r.version))

	outbox := pgx.Identifier{schema, "outbox"}.Sanitize()
	insert := "INSERT INTO " + outbox + ` (aggregatetype, aggregateid, type, payload)
		SELECT 'order', 'o-' || n, 'OrderPlaced', jsonb_build_object('n', n, 'pad', repeat('x', 200))
		FROM generate_series(1, $1) n`
	// commit writes n outbox rows in one committed transaction and returns
	// the bytes of WAL it wrote.
	commit := func(n int) int64 {
		before := r.insertLSN()
		_, err := p.Exec(ctx, insert, n)
		require.NoError(t, err)
		return int64(r.insertLSN() - before)
	}
	// passRunningXacts writes an xl_running_xacts record and consumes the
	// slot until it confirmed past it.
	passRunningXacts := func(what string) slotLSNs {
		_, to := r.runningXacts()
		var st slotLSNs
		brewtest.Eventually(t, 30*time.Second, what, func() (bool, string) {
			r.consume()
			st = r.state()
			return st.Confirmed >= to, fmt.Sprintf("restart_lsn %s, confirmed_flush_lsn %s, want confirmed >= %s", st.Restart, st.Confirmed, to)
		})
		return st
	}

	// With no transaction open, the same steps move restart_lsn: past
	// everything written before the xl_running_xacts record.
	// (Each try writes one more record: another session's transaction open
	// at one holds restart_lsn back as this test's does below.)
	created := r.state()
	commit(50)
	written := r.insertLSN()
	brewtest.Eventually(t, 30*time.Second, "restart_lsn moves with no transaction open", func() (bool, string) {
		_, to := r.runningXacts()
		r.consume()
		st := r.state()
		return st.Restart >= written && st.Confirmed >= to, fmt.Sprintf("restart_lsn %s (created at %s), want >= %s", st.Restart, created.Restart, written)
	})

	// The transaction left open: its first write is the outbox row.
	tx, err := p.Begin(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { tx.Rollback(context.Background()) }) //nolint:errcheck // committed already, or the test failed
	beforeOpen := r.lsn(tx.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text"))
	_, err = tx.Exec(ctx, "INSERT INTO "+outbox+" (aggregatetype, aggregateid, type, payload) VALUES ('order', 'open', 'OrderPlaced', '{}')")
	require.NoError(t, err)
	var openXid string
	require.NoError(t, tx.QueryRow(ctx, "SELECT pg_current_xact_id()::xid::text").Scan(&openXid))
	afterOpen := r.lsn(tx.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text"))
	opened := r.state()

	// The consumer goes on: three committed transactions, each consumed and
	// confirmed past an xl_running_xacts record written after it.
	var committed int64
	var rounds []slotLSNs
	for i := range 3 {
		committed += commit(200)
		st := passRunningXacts(fmt.Sprintf("round %d: the consumer confirms past the running xacts", i+1))
		require.Greater(t, st.Confirmed, afterOpen, "confirmed_flush_lsn moves past the open transaction")
		require.Less(t, st.Restart, afterOpen, "restart_lsn stays before the open transaction's first record ends")
		rounds = append(rounds, st)
	}
	held := rounds[len(rounds)-1]
	require.GreaterOrEqual(t, held.Retained-opened.Retained, committed,
		"the WAL the slot retains grows by at least what the committed transactions wrote (%d -> %d bytes)", opened.Retained, held.Retained)

	// The open transaction commits: the consumer gets it (its BEGIN carries
	// its first LSN) and, past the next xl_running_xacts, restart_lsn moves
	// past it.
	require.NoError(t, tx.Commit(ctx))
	var first pglogrepl.LSN
	var released slotLSNs
	brewtest.Eventually(t, 30*time.Second, "restart_lsn moves past the transaction once it committed", func() (bool, string) {
		_, to := r.runningXacts()
		for _, row := range r.consume() {
			if row[1] != openXid {
				continue
			}
			l, err := pglogrepl.ParseLSN(row[0])
			require.NoError(t, err)
			if first == 0 || l < first {
				first = l
			}
		}
		released = r.state()
		return first != 0 && released.Confirmed >= to && released.Restart > first,
			fmt.Sprintf("first LSN %s, restart_lsn %s, confirmed_flush_lsn %s", first, released.Restart, released.Confirmed)
	})
	require.GreaterOrEqual(t, first, beforeOpen, "the first LSN is the open transaction's insert")
	require.Less(t, first, afterOpen)

	var b strings.Builder
	for i, st := range rounds {
		require.LessOrEqual(t, st.Restart, first, "round %d: restart_lsn at or before the open transaction's first LSN", i+1)
		require.Greater(t, st.Confirmed, first, "round %d: confirmed_flush_lsn past it", i+1)
		fmt.Fprintf(&b, "\nround %d: confirmed_flush_lsn %s (+%d bytes past it), restart_lsn %s (%d bytes before it), retained %d bytes",
			i+1, st.Confirmed, st.Confirmed-first, st.Restart, first-st.Restart, st.Retained)
	}
	t.Logf("open transaction xid %s, first LSN %s; WAL written by the committed transactions after it: %d bytes%s\n"+
		"retained: %d bytes once it was open, %d bytes after the three rounds (+%d)\n"+
		"after its commit: restart_lsn %s (+%d bytes past its first LSN), retained %d bytes",
		openXid, first, committed, b.String(), opened.Retained, held.Retained, held.Retained-opened.Retained,
		released.Restart, released.Restart-first, released.Retained)
}

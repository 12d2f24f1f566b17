package cdc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/brew-course/kafka/lectures/11-outbox-cdc/drill"
	"github.com/brew-course/kafka/pkg/brewkit"
)

// The points of a reader's work where a drill kills it.
const (
	// KillReceived: the outbox row's change is decoded, not yet produced.
	KillReceived = "received"
	// KillAcked: Kafka acknowledged the record, the slot was not yet told.
	KillAcked = "kafka-acked"
)

// Stages are the kill points in the order a drill takes turns with them.
var Stages = []string{KillReceived, KillAcked}

// SaysStage is a kill point in the README's words.
func SaysStage(stage string) string {
	switch stage {
	case KillReceived:
		return "change received, not produced"
	case KillAcked:
		return "Kafka acked, slot not acked"
	}
	return stage
}

// Kill is where a reader kills itself: at Stage of the order numbered Seq.
type Kill struct {
	Stage string
	Seq   int64
}

// ParseKill reads "stage@seq" ("" is no kill).
func ParseKill(s string) (Kill, error) {
	if s == "" {
		return Kill{Seq: -1}, nil
	}
	stage, n, ok := strings.Cut(s, "@")
	var k Kill
	if _, err := fmt.Sscanf(n, "%d", &k.Seq); !ok || err != nil || (stage != KillReceived && stage != KillAcked) {
		return k, fmt.Errorf("want STAGE@ORDER with STAGE %s or %s", KillReceived, KillAcked)
	}
	k.Stage = stage
	return k, nil
}

// Reader streams one slot's outbox changes into a topic.
type Reader struct {
	Slot, Publication, Topic string
	// AckEvery is how often the reader flushes the producer and then
	// acknowledges the slot's LSN (a standby status update); also when the
	// stream goes idle and when the server asks.
	AckEvery time.Duration
	Kill     Kill
	Crash    func() // what a kill does: brewkit.Crash unless set
}

// ReaderDefaults are the reader's settings of the demo.
var ReaderDefaults = Reader{AckEvery: 200 * time.Millisecond, Kill: Kill{Seq: -1}}

// Stream connects to the slot and streams until ctx ends: each outbox INSERT
// becomes a record (key: aggregateid, value: payload, headers: event-id and
// type), produced in commit order by one idempotent producer (acks=all); the
// slot's LSN is acknowledged only up to the end of the last transaction whose
// records Kafka acknowledged. When ctx ends it flushes and acknowledges what
// it sent, and returns nil.
func (r Reader) Stream(ctx context.Context, cfg brewkit.Config) error {
	pcfg, err := replicationConfig()
	if err != nil {
		return err
	}
	cl, err := brewkit.NewClient(cfg, kgo.DefaultProduceTopic(r.Topic), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		return err
	}
	defer cl.Close()
	conn, err := startReplication(ctx, pcfg, r.Slot, r.Publication)
	if err != nil {
		if ctx.Err() != nil {
			return nil // stopped before it streamed
		}
		return err
	}
	defer conn.Close(context.Background())
	s := &stream{r: r, conn: conn, cl: cl, relations: map[uint32]*pglogrepl.RelationMessage{}}
	if s.r.AckEvery <= 0 {
		s.r.AckEvery = ReaderDefaults.AckEvery
	}
	if s.r.Crash == nil {
		s.r.Crash = brewkit.Crash
	}
	return s.run(ctx)
}

// SlotBusyWait is how long a reader waits for its slot to be let go: a
// reader killed a moment ago leaves its walsender streaming until
// PostgreSQL notices the connection is gone.
const SlotBusyWait = 15 * time.Second

// startReplication connects and starts streaming from slot at its
// confirmed_flush_lsn (start position 0: the last position this reader, or
// the one before it, acknowledged). While another reader still holds the
// slot (55006, object in use) it tries again, for SlotBusyWait.
func startReplication(ctx context.Context, pcfg *pgconn.Config, slot, publication string) (*pgconn.PgConn, error) {
	deadline := time.Now().Add(SlotBusyWait)
	for {
		conn, err := pgconn.ConnectConfig(ctx, pcfg)
		if err != nil {
			return nil, fmt.Errorf("replication connection to PostgreSQL: %w", err)
		}
		err = pglogrepl.StartReplication(ctx, conn, slot, 0, pglogrepl.StartReplicationOptions{
			PluginArgs: []string{"proto_version '1'", "publication_names '" + publication + "'"},
		})
		if err == nil {
			return conn, nil
		}
		conn.Close(context.Background())
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "55006" || time.Now().After(deadline) {
			return nil, fmt.Errorf("starting replication from slot %s: %w", slot, err)
		}
		if err := brewkit.Sleep(ctx, 100*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

type stream struct {
	r         Reader
	conn      *pgconn.PgConn
	cl        *kgo.Client
	relations map[uint32]*pglogrepl.RelationMessage

	inTx      bool
	safe      pglogrepl.LSN // everything before it is received (and produced, when it was ours)
	acked     pglogrepl.LSN // what the slot was last told
	pending   int           // records produced since the last flush
	mustReply bool          // the server asked for a status update
	mu        sync.Mutex
	failed    error // the first produce error
}

func (s *stream) run(ctx context.Context) error {
	nextAck := time.Now().Add(s.r.AckEvery)
	for {
		if ctx.Err() != nil {
			// Stopped: what was sent is acknowledged, nothing more.
			return s.flushAndAck(context.WithoutCancel(ctx), true)
		}
		if !time.Now().Before(nextAck) {
			if s.pending > 0 || s.safe > s.acked || s.mustReply {
				if err := s.flushAndAck(ctx, false); err != nil {
					return err
				}
			}
			nextAck = time.Now().Add(s.r.AckEvery)
		}
		rctx, cancel := context.WithDeadline(ctx, nextAck)
		raw, err := s.conn.ReceiveMessage(rctx)
		cancel()
		if err != nil {
			if pgconn.Timeout(err) || ctx.Err() != nil {
				continue
			}
			return fmt.Errorf("reading slot %s: %w", s.r.Slot, err)
		}
		switch m := raw.(type) {
		case *pgproto3.ErrorResponse:
			return fmt.Errorf("slot %s: %s %s", s.r.Slot, m.Code, m.Message)
		case *pgproto3.CopyData:
			if len(m.Data) == 0 {
				continue
			}
			switch m.Data[0] {
			case pglogrepl.PrimaryKeepaliveMessageByteID:
				ka, err := pglogrepl.ParsePrimaryKeepaliveMessage(m.Data[1:])
				if err != nil {
					return err
				}
				// Between transactions the server has sent all it decoded
				// up to ServerWALEnd (other tables' changes, which the
				// publication leaves out): once what we produced is
				// acknowledged, the slot may move there. Without this a
				// reader of a quiet table holds the WAL of the busy ones.
				if !s.inTx && ka.ServerWALEnd > s.safe {
					s.safe = ka.ServerWALEnd
				}
				if ka.ReplyRequested {
					s.mustReply, nextAck = true, time.Time{}
				} else if s.safe > s.acked && s.pending == 0 {
					nextAck = time.Time{} // idle: move the slot now
				}
			case pglogrepl.XLogDataByteID:
				x, err := pglogrepl.ParseXLogData(m.Data[1:])
				if err != nil {
					return err
				}
				if err := s.change(ctx, x.WALData); err != nil {
					return err
				}
			}
		}
	}
}

// change handles one pgoutput message.
func (s *stream) change(ctx context.Context, data []byte) error {
	msg, err := pglogrepl.Parse(data)
	if err != nil {
		return fmt.Errorf("decoding pgoutput: %w", err)
	}
	switch m := msg.(type) {
	case *pglogrepl.RelationMessage:
		s.relations[m.RelationID] = m
	case *pglogrepl.BeginMessage:
		s.inTx = true
	case *pglogrepl.CommitMessage:
		s.inTx = false
		// The end of the commit record: a reader that starts from here
		// does not get this transaction again.
		s.safe = m.TransactionEndLSN
	case *pglogrepl.InsertMessage:
		rel := s.relations[m.RelationID]
		if rel == nil {
			return fmt.Errorf("an INSERT into relation %d before its RELATION message", m.RelationID)
		}
		rec, seq, err := outboxRecord(rel, m.Tuple)
		if err != nil {
			return err
		}
		if s.r.Kill.Stage == KillReceived && seq == s.r.Kill.Seq {
			s.r.Crash()
		}
		s.pending++
		s.cl.Produce(ctx, rec, func(_ *kgo.Record, err error) {
			if err != nil {
				s.mu.Lock()
				if s.failed == nil {
					s.failed = err
				}
				s.mu.Unlock()
			}
		})
		if s.r.Kill.Stage == KillAcked && seq == s.r.Kill.Seq {
			if err := s.flush(ctx); err != nil {
				return err
			}
			s.r.Crash()
		}
	}
	// UPDATE and DELETE of outbox rows (a relay's marks, a cleanup) are no
	// events; TRUNCATE neither.
	return nil
}

func (s *stream) flush(ctx context.Context) error {
	if s.pending == 0 {
		return nil
	}
	if err := s.cl.Flush(ctx); err != nil {
		return err
	}
	s.pending = 0
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failed != nil {
		return fmt.Errorf("producing to %s: %w", s.r.Topic, s.failed)
	}
	return nil
}

// flushAndAck waits until Kafka acknowledged every record produced so far,
// then tells the slot it may move to safe. final: the reader is stopping,
// and has half of brewkit.StopGrace for it.
func (s *stream) flushAndAck(ctx context.Context, final bool) error {
	if final {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, brewkit.StopGrace/2)
		defer cancel()
	}
	if err := s.flush(ctx); err != nil {
		return err
	}
	if s.safe == 0 && s.acked == 0 {
		return nil
	}
	err := pglogrepl.SendStandbyStatusUpdate(ctx, s.conn, pglogrepl.StandbyStatusUpdate{
		WALWritePosition: s.safe, WALFlushPosition: s.safe, WALApplyPosition: s.safe,
	})
	if err != nil {
		return fmt.Errorf("acknowledging %s to slot %s: %w", s.safe, s.r.Slot, err)
	}
	s.acked, s.mustReply = s.safe, false
	return nil
}

// outboxRecord is the record of one outbox row: key its aggregateid, value
// its payload (jsonb, as PostgreSQL prints it), headers its id and type.
// seq is the order's number in its run, for the kill points.
func outboxRecord(rel *pglogrepl.RelationMessage, t *pglogrepl.TupleData) (*kgo.Record, int64, error) {
	if t == nil || len(t.Columns) != len(rel.Columns) {
		return nil, 0, fmt.Errorf("%s.%s: a row that does not match its columns", rel.Namespace, rel.RelationName)
	}
	col := map[string][]byte{}
	for i, c := range rel.Columns {
		if t.Columns[i].DataType == pglogrepl.TupleDataTypeText {
			col[c.Name] = t.Columns[i].Data
		}
	}
	for _, name := range []string{"id", "aggregateid", "type", "payload"} {
		if col[name] == nil {
			return nil, 0, fmt.Errorf("%s.%s: no %s in the row: is it an outbox table?", rel.Namespace, rel.RelationName, name)
		}
	}
	var ev struct {
		Seq int64 `json:"seq"`
	}
	if err := json.Unmarshal(col["payload"], &ev); err != nil {
		return nil, 0, errors.New("an outbox payload that is not JSON: " + err.Error())
	}
	return &kgo.Record{
		Key:   col["aggregateid"],
		Value: col["payload"],
		Headers: []kgo.RecordHeader{
			{Key: drill.HeaderEventID, Value: col["id"]},
			{Key: "type", Value: col["type"]},
		},
	}, ev.Seq, nil
}

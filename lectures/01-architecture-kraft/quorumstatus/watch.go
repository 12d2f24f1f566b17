package quorumstatus

import (
	"bytes"
	"fmt"
	"time"
)

// Watch follows successive looks at the quorum and notes when the Raft leader
// changes, for the live demo of stopping the active controller.
type Watch struct {
	leader     int32     // the leader of the last answer; -1 none
	leaderSeen time.Time // when the last leader was last seen leading
	answered   bool      // whether any look has answered
	Events     []string  // leader changes, oldest first
}

// Observe records one look taken at time at, and returns the event it caused, if any.
func (w *Watch) Observe(st Status, err error, at time.Time) string {
	stamp := at.Format("15:04:05.000")
	var ev string
	switch {
	case err != nil:
		// The cluster did not answer this time: keep the last known leader.
		return ""
	case !w.answered:
		w.answered = true
	case st.RaftLeader == w.leader:
	case st.RaftLeader < 0:
		ev = fmt.Sprintf("%s  RaftLeader %d -> none: the voters are electing", stamp, w.leader)
	case w.leader < 0:
		ev = fmt.Sprintf("%s  RaftLeader none -> %d: elected %s after the old leader was last seen", stamp, st.RaftLeader, at.Sub(w.leaderSeen).Round(10*time.Millisecond))
	default:
		ev = fmt.Sprintf("%s  RaftLeader %d -> %d: elected %s after the old leader was last seen", stamp, w.leader, st.RaftLeader, at.Sub(w.leaderSeen).Round(10*time.Millisecond))
	}
	if ev != "" {
		w.Events = append(w.Events, ev)
	}
	w.leader = st.RaftLeader
	if st.RaftLeader >= 0 {
		w.leaderSeen = at
	}
	return ev
}

// Frame renders the status, or the error, with the leader changes so far.
func (w *Watch) Frame(st Status, err error, at time.Time) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "quorum-status -watch  %s  (Ctrl-C to stop)\n\n", at.Format("15:04:05"))
	if err != nil {
		fmt.Fprintf(&b, "no answer: %v\n", err)
	} else {
		st.Print(&b)
	}
	fmt.Fprintln(&b)
	if len(w.Events) == 0 {
		fmt.Fprintln(&b, "Leader changes: none yet (stop the leader: make stop-leader)")
	} else {
		fmt.Fprintln(&b, "Leader changes:")
		from := max(0, len(w.Events)-5)
		for _, ev := range w.Events[from:] {
			fmt.Fprintln(&b, "  "+ev)
		}
	}
	return b.String()
}

// Line is the one-line view for piped output: it changes only when the
// cluster does, so a log shows each change once. It leaves out the controller
// proxy, which real Kafka picks at random among live brokers on every request.
func (w *Watch) Line(st Status, err error) string {
	if err != nil {
		return fmt.Sprintf("no answer: %v\n", err)
	}
	ids := make([]int32, len(st.Brokers))
	for i, b := range st.Brokers {
		ids[i] = b.ID
	}
	leader := "none"
	switch {
	case st.QuorumUnavailable != "":
		leader = "unavailable"
	case st.RaftLeader >= 0:
		leader = fmt.Sprint(st.RaftLeader)
	}
	return fmt.Sprintf("RaftLeader: %s  Brokers: %v  CurrentVoters: %v\n", leader, ids, st.Voters)
}

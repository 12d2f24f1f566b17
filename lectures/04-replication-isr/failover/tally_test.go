package failover

import "testing"

// The tally must tell a duplicate in the log from a consumer re-reading.
func TestTallyCountsCopiesInTheLogNotReReads(t *testing.T) {
	tl := newTally()
	for seq := int64(1); seq <= 3; seq++ {
		tl.send()
		tl.done(seq, 0, nil)
	}
	tl.got(1, position{0, 10})
	tl.got(1, position{0, 10}) // re-read after an offset reset: not a duplicate
	tl.got(2, position{1, 4})
	tl.got(2, position{1, 5}) // the same order stored twice: a duplicate
	if tl.allAckedRead() {
		t.Fatal("order 3 was not read yet")
	}
	var r Report
	tl.fill(&r)
	if r.Sent != 3 || r.Acked != 3 || r.Read != 2 || r.Lost != 1 || r.Duplicated != 1 {
		t.Fatalf("got %+v", r)
	}
}

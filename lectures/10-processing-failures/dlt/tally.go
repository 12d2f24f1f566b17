package dlt

import "github.com/brew-course/kafka/lectures/10-processing-failures/partner"

// This file is the harness around RunReplay: what the partner's booking log
// says of the orders a replay selects, booked during the replay, twice, or
// not at all. The Kafka calls are in replay.go.

// tally fills in res what the partner's log says of the selected dead
// letters' orders (res.OrderIDs, letters ls): how many times each is booked
// (after), how many bookings are new since before, which are booked twice,
// and which retriable ones are not booked.
func (res *ReplayResult) tally(ls []Letter, before, after partner.Log) {
	seen := map[string]bool{}
	for _, id := range res.OrderIDs {
		seen[id] = true
	}
	res.Times = map[string]int{}
	for id, n := range after.Times() {
		if seen[id] {
			res.Times[id] = n
		}
	}
	was := before.Times()
	for _, id := range res.OrderIDs {
		res.New += res.Times[id] - was[id]
		if res.Times[id] > 1 {
			res.Doubles = append(res.Doubles, id)
		}
	}
	kinds := map[string]string{}
	for _, l := range ls {
		if res.Replay.Selects(l) {
			kinds[l.Key] = l.Kind
		}
	}
	for _, id := range res.OrderIDs {
		if res.Times[id] == 0 && kinds[id] == KindRetriable {
			res.Unbooked = append(res.Unbooked, id)
		}
	}
}

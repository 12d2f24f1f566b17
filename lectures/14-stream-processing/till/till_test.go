package till

import (
	"testing"
	"time"

	"github.com/brew-course/kafka/lectures/14-stream-processing/window"
)

// The till's orders are what it means them to be under the window's rules:
// each partition judged in the order written gives the verdict the till
// drew, and the same seed draws the same orders.
func TestOrdersAreWhatTheyMean(t *testing.T) {
	orders := Defaults.Draw(6)
	stream := map[int32]time.Time{}
	var c window.Counts
	for i, o := range orders {
		v, st := window.Brew.Judge(stream[o.Partition], o.At)
		stream[o.Partition] = st
		if v != o.Meant {
			t.Fatalf("order %d (%s at %s on partition %d): judged %v, meant %v", i, o.ShopID, o.At.Format("15:04:05.000"), o.Partition, v, o.Meant)
		}
		c.Count(v)
	}
	if c.OutOfOrder == 0 || c.TooLate == 0 {
		t.Fatalf("the defaults draw out-of-order and late orders: %+v", c)
	}
	t.Logf("%+v", c)
	again := Defaults.Draw(6)
	for i := range orders {
		if again[i].OrderID != orders[i].OrderID || !again[i].At.Equal(orders[i].At) || again[i].Cents != orders[i].Cents {
			t.Fatalf("order %d differs between two draws of one seed", i)
		}
	}
}

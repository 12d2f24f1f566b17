// The reference solution of exercise 05/chooseacks.
package chooseacks

import "github.com/twmb/franz-go/pkg/kgo"

// PaymentAcks is the acks setting of payment-service's producer: acks=all,
// acknowledged once every in-sync replica has the payment (and, with the
// topic's min.insync.replicas=2, at least two nodes).
func PaymentAcks() kgo.Acks { return kgo.AllISRAcks() }

// ClickAcks is the acks setting of the app's click producer: acks=1, the
// leader's answer alone; a click the leader took can be lost if it dies at
// once, and a slow follower does not hold the app. (acks=0 would not wait
// for the leader either, and would not even hear that a click was refused.)
func ClickAcks() kgo.Acks { return kgo.LeaderAck() }

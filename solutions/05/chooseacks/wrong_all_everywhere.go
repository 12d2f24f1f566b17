// A plausible wrong solution of exercise 05/chooseacks: acks=all for both
// ("safe everywhere"). A click then waits for every in-sync replica, and a
// hung follower stays in the ISR until the controller fences it
// (broker.session.timeout.ms, 9 s without a heartbeat), so the app
// waits seconds for analytics. The grader must fail it.
package chooseacks

import "github.com/twmb/franz-go/pkg/kgo"

func PaymentAcks() kgo.Acks { return kgo.AllISRAcks() }

func ClickAcks() kgo.Acks { return kgo.AllISRAcks() }

package stand

import "strings"

// KafkaVersion is the Apache Kafka release every stand runs: the native
// stand's jars (stand/native/pom.xml gets it from here), the docker stand's
// image, the stand-in built where no image can be pulled, the containers of
// pkg/brewcontainers. It is the one place that names it: the compose file,
// the pom's default, the scripts and every README are checked against it by
// stand's TestOneKafkaVersion. Moving the course to another release is this
// line (then re-measure what the READMEs quote).
const KafkaVersion = "4.4.0"

// PreviousVersion is the release lecture 15's rolling upgrade starts from
// (the minor before KafkaVersion, on a lab cluster of its own): the one
// other release the course names, and only in lecture 15
// (TestOneKafkaVersion). Moving the course to another release moves it too.
const PreviousVersion = "4.3.1"

// KafkaMinor is KafkaVersion without its patch number ("4.4"): what the
// lectures say when they name the release ("Kafka 4.4 ...").
var KafkaMinor = KafkaVersion[:strings.LastIndex(KafkaVersion, ".")]

// OfficialImage is the image the docker stand runs by default.
const OfficialImage = "apache/kafka:" + KafkaVersion

// StandinImage is the tag stand/standin/build gives the image it builds
// where OfficialImage cannot be pulled.
const StandinImage = "brew/kafka-standin:" + KafkaVersion

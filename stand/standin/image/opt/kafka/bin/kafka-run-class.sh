#!/bin/bash
# kafka-run-class.sh CLASS [ARGS]: runs a class from Kafka's jars, taking the
# same environment variables as the distribution's script of that name.
set -euo pipefail
if [ $# -lt 1 ]; then
	echo "usage: kafka-run-class.sh CLASS [ARGS]" >&2
	exit 2
fi
class=$1
shift
log4j=${KAFKA_LOG4J_OPTS:--Dlog4j2.configurationFile=/opt/kafka/config/tools-log4j2.yaml}
if [ ! -f /opt/kafka/config/tools-log4j2.yaml ]; then
	log4j=${KAFKA_LOG4J_OPTS:--Dlog4j2.configurationFile=/etc/kafka/docker/tools-log4j2.yaml}
fi
# shellcheck disable=SC2086 # the *_OPTS variables hold several options each
exec java ${KAFKA_HEAP_OPTS:--Xmx256M} ${KAFKA_JVM_PERFORMANCE_OPTS:-} $log4j ${KAFKA_OPTS:-} \
	-cp '/opt/kafka/libs/*' "$class" "$@"

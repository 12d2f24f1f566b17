#!/bin/bash
# kafka-server-start.sh server.properties: runs the broker in the foreground.
set -euo pipefail
if [ $# -lt 1 ]; then
	echo "usage: kafka-server-start.sh server.properties" >&2
	exit 2
fi
export KAFKA_HEAP_OPTS=${KAFKA_HEAP_OPTS:--Xmx1G -Xms1G}
export KAFKA_JVM_PERFORMANCE_OPTS=${KAFKA_JVM_PERFORMANCE_OPTS:--server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true}
export KAFKA_LOG4J_OPTS=${KAFKA_LOG4J_OPTS:--Dlog4j2.configurationFile=/opt/kafka/config/log4j2.yaml}
exec /opt/kafka/bin/kafka-run-class.sh kafka.Kafka "$@"

# What every lecture's Makefile shares. A lecture's Makefile starts with
#
#     include ../lecture.mk
#
# then names its own variables and targets, each with a `## help` comment,
# and SMOKE: the tests `make smoke` runs on any cluster.
#
# RESTORE is what `make restore` runs after starting what is stopped, for a
# lecture that leaves more than stopped nodes behind (lecture 15: node 4).
#
# SERVICES names the services beside the cluster the lecture needs (postgres,
# connect, prometheus; none by default). A lecture that needs some sets it
# after the include and calls `$(BREWSTAND) ensure $(SERVICES)` in its
# targets, which starts a stand if no cluster answers (a real one when a
# service such as connect needs real Kafka) and then each service that is not
# running, installing it on first use:
#
#     include ../lecture.mk
#     SERVICES := postgres connect
#
#     outbox: ## write orders and their outbox rows in one transaction
#     	@$(BREWSTAND) ensure $(SERVICES)
#     	@go run ./cmd/outbox
SHELL := /bin/bash
.DEFAULT_GOAL := help
ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
BREWSTAND := $(ROOT)/scripts/brewstand
SMOKE ?= ^TestLecture$$
SERVICES ?=

# The lecture's number, from its folder's name (02-topics-partitions: 02).
LECTURE_NO := $(firstword $(subst -, ,$(notdir $(CURDIR))))

.PHONY: help test smoke restore exercise check

# help lists the lecture's own targets first, then these, aligned.
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z][a-z0-9-]*:.*## / {name[++n] = $$1; text[n] = $$2; if (length($$1) > w) w = length($$1)} \
		END {for (i = 1; i <= n; i++) printf "  make %-*s  %s\n", w, name[i], text[i]}' $(MAKEFILE_LIST)

test: ## this lecture's tests (fast tier; `make test-real` at the root runs them on real Kafka)
	@go test -count=1 ./...

# smoke runs go test on the packages that declare a test SMOKE names, not on
# ./...: go test links a binary for every package it is given, and ./... is
# about ten per lecture, most with none of these tests (124 of 154 links).
smoke: ## the smoke tests on KAFKA_BOOTSTRAP (BREW_CLUSTER=containers: Docker only)
	@names='$(SMOKE)'; names=$${names#^}; names=$${names%\$$}; \
	pkgs=$$(grep -rlE --include='*_test.go' "^func $$names\(t \*testing\.T\)" . | xargs -r -n1 dirname | sort -u); \
	[ -n "$$pkgs" ] || { echo "smoke: no package here declares a test that $(SMOKE) names" >&2; exit 1; }; \
	go test -count=1 -p 1 -v -run '$(SMOKE)' $$pkgs

exercise: ## this lecture's graded exercises and their tasks
	@$(ROOT)/scripts/exercises list -lecture $(LECTURE_NO)

check: ## grade your exercises: make check EX=NAME (each of the lecture's without EX)
	@$(ROOT)/scripts/exercises check -lecture $(LECTURE_NO) $(if $(EX),-ex $(EX))

restore: ## resume paused and start stopped nodes of the stand that is up (after a drill or a Ctrl-C)
	@$(BREWSTAND) up
	$(if $(RESTORE),@$(RESTORE))

module github.com/brew-course/kafka/lectures/04-replication-isr

go 1.26.0

require github.com/brew-course/kafka/pkg/brewkit v0.0.0

replace github.com/brew-course/kafka/pkg/brewkit => ../../pkg/brewkit

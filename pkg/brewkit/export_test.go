package brewkit

// UnknownTopicGrace is unknownTopicGrace for the tests of package
// brewkit_test.
const UnknownTopicGrace = unknownTopicGrace

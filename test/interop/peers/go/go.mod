module interoppeer

go 1.24

require (
	github.com/apache/pulsar-client-go v0.14.0
	github.com/babelqueue/babelqueue-go v1.8.0
	github.com/babelqueue/babelqueue-go/pulsar v1.0.0
)

// The Go interop peer's module, built by scripts/interop/setup-go.mjs with the recipe of
// ../shared/vendor/README.md: the go line and the whole require block of the Go SDK's pulsar/go.mod
// (v1.8.0; it pins the genproto split), its go.sum, and the SDK modules (core, pulsar, otel) replaced by the SDK
// unpacked from the vendored tarball. The build copy links vendored-sdk to that unpacked tree in the
// cache (~/.cache/babelqueue-nestjs-pulsar/interop/vendor/...); the module proxy serves the rest (the
// OpenTelemetry SDK among it).
module interoppeer

go 1.23.0

require (
	github.com/apache/pulsar-client-go v0.14.0
	github.com/babelqueue/babelqueue-go v1.6.0
)

require (
	github.com/99designs/go-keychain v0.0.0-20191008050251-8e49817e8af4 // indirect
	github.com/99designs/keyring v1.2.1 // indirect
	github.com/AthenZ/athenz v1.10.39 // indirect
	github.com/DataDog/zstd v1.5.0 // indirect
	github.com/ardielle/ardielle-go v1.5.2 // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/bits-and-blooms/bitset v1.4.0 // indirect
	github.com/cespare/xxhash/v2 v2.2.0 // indirect
	github.com/danieljoos/wincred v1.1.2 // indirect
	github.com/dvsekhvalnov/jose2go v1.6.0 // indirect
	github.com/go-logr/logr v1.4.1 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/godbus/dbus v0.0.0-20190726142602-4481cbc300e2 // indirect
	github.com/golang-jwt/jwt/v5 v5.2.1 // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	github.com/gsterjov/go-libsecret v0.0.0-20161001094733-a6f4afe4910c // indirect
	github.com/hamba/avro/v2 v2.22.2-0.20240625062549-66aad10411d9 // indirect
	github.com/hashicorp/errwrap v1.1.0 // indirect
	github.com/hashicorp/go-multierror v1.1.1 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/klauspost/compress v1.17.9 // indirect
	github.com/matttproud/golang_protobuf_extensions v1.0.4 // indirect
	github.com/mitchellh/mapstructure v1.5.0 // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.2 // indirect
	github.com/mtibben/percent v0.2.1 // indirect
	github.com/pierrec/lz4 v2.0.5+incompatible // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/prometheus/client_golang v1.14.0 // indirect
	github.com/prometheus/client_model v0.3.0 // indirect
	github.com/prometheus/common v0.37.0 // indirect
	github.com/prometheus/procfs v0.8.0 // indirect
	github.com/sirupsen/logrus v1.9.3 // indirect
	github.com/spaolacci/murmur3 v1.1.0 // indirect
	go.opentelemetry.io/otel v1.24.0 // indirect
	go.opentelemetry.io/otel/metric v1.24.0 // indirect
	go.uber.org/atomic v1.7.0 // indirect
	golang.org/x/mod v0.18.0 // indirect
	golang.org/x/net v0.23.0 // indirect
	golang.org/x/oauth2 v0.11.0 // indirect
	golang.org/x/sys v0.19.0 // indirect
	golang.org/x/term v0.19.0 // indirect
	google.golang.org/appengine v1.6.7 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20231016165738-49dd2c1f3d0b // indirect
	google.golang.org/protobuf v1.33.0 // indirect
)

require github.com/babelqueue/babelqueue-go/pulsar v1.0.0

// The SDK's OpenTelemetry module (vendored like the rest) and, at the versions its go.mod pins, the
// OpenTelemetry SDK for the peer's in-memory exporter (tracetest).
require (
	github.com/babelqueue/babelqueue-go/otel v1.0.0
	go.opentelemetry.io/otel/sdk v1.24.0
	go.opentelemetry.io/otel/trace v1.24.0
)

replace github.com/babelqueue/babelqueue-go => ./vendored-sdk

replace github.com/babelqueue/babelqueue-go/pulsar => ./vendored-sdk/pulsar

replace github.com/babelqueue/babelqueue-go/otel => ./vendored-sdk/otel

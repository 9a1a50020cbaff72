//go:build !cgo

package pagecodec

// LibZstd needs cgo: nil here.
var LibZstd *Codec

// Default is the codec a build uses: without cgo, Go. The files read the
// same as a cgo binary's, but their bytes, and so the manifest's digests,
// differ; the manifest's codec says which wrote them.
var Default = Go

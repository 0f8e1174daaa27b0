module github.com/weir-pki/weir/test/interop/certmanager

go 1.26.0

require github.com/cert-manager/cert-manager v1.21.0

module github.com/nativeauth/nativeauth/bindings/go

go 1.19

module github.com/pulumi/pulumi-yaml

go 1.26.0

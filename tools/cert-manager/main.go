// Command cert-manager runs cert-manager's controller or its cainjector, built from the
// published module github.com/cert-manager/cert-manager (scripts/real/toolchain.ts pins the version).
//
// Upstream's mains (cmd/controller, cmd/cainjector) are modules of their own that the Go module
// proxy does not serve, and they import the module's internal/ packages (the configuration API and
// its defaulting), which no other module may import. The packages that do the work are public, so
// this main wires them as upstream's cmd/controller/app/controller.go and
// cmd/cainjector/app/controller.go do (read at v1.21.2), with upstream's defaults
// (internal/apis/config/{controller,cainjector}/v1alpha1/defaults.go) passed as values:
//
//	cert-manager controller --kubeconfig=FILE --cluster-resource-namespace=NS
//	cert-manager cainjector --kubeconfig=FILE
//
// One binary for both, so the cold build links once.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	logf "github.com/cert-manager/cert-manager/pkg/logs"
	"github.com/cert-manager/cert-manager/pkg/util"
	"k8s.io/klog/v2"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: cert-manager controller|cainjector --kubeconfig=FILE [flags] | cert-manager version")
		os.Exit(2)
	}
	command, args := os.Args[1], os.Args[2:]
	if command == "version" {
		// The version real:tools asks of every binary it builds (scripts/real/toolchain.ts): the
		// AppVersion the build's ldflags set, as upstream's `cmctl version` reports it.
		fmt.Println(util.AppVersion)
		return
	}
	flags := flag.NewFlagSet(command, flag.ExitOnError)
	kubeconfig := flags.String("kubeconfig", "", "kubeconfig of the cluster (required)")
	clusterResourceNamespace := flags.String("cluster-resource-namespace", "kube-system",
		"where a ClusterIssuer's Secrets live (controller; upstream's default)")
	// klog's flags (-v: cert-manager logs at 2 for info, 4 for debug, pkg/logs/logs.go).
	klog.InitFlags(flags)
	_ = flags.Parse(args)
	if *kubeconfig == "" {
		fmt.Fprintln(os.Stderr, "cert-manager: --kubeconfig is required")
		os.Exit(2)
	}

	logf.InitLogs()
	defer logf.FlushLogs()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	var err error
	switch command {
	case "controller":
		err = runController(logf.NewContext(ctx, logf.Log, "controller"), *kubeconfig, *clusterResourceNamespace)
	case "cainjector":
		err = runCAInjector(logf.NewContext(ctx, logf.Log, "cainjector"), *kubeconfig)
	default:
		err = fmt.Errorf("unknown command %q: controller or cainjector", command)
	}
	if err != nil {
		logf.Log.Error(err, "cert-manager "+command+" failed")
		logf.FlushLogs()
		os.Exit(1)
	}
}

package main

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/cert-manager/cert-manager/pkg/controller"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
	"golang.org/x/sync/errgroup"

	// The controllers a CA ClusterIssuer (or Issuer) needs, registered by their init functions
	// (controller.Register); upstream's cmd/controller/app/start.go imports these among others.
	// Left out: ACME (orders, challenges, its issuer), Vault, Venafi, self-signed, the ingress and
	// Gateway shims, CertificateSigningRequests and the certificates metrics controller.
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	// The CA issuer type (issuer.RegisterIssuer in its init), which the (Cluster)Issuer controllers set up.
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
)

// Upstream's defaults (internal/apis/config/controller/v1alpha1/defaults.go, v1.21.2).
const (
	numberOfConcurrentWorkers = 5
	kubernetesAPIQPS          = 20
	kubernetesAPIBurst        = 50
	maxConcurrentChallenges   = 60
	minimumBackoff            = time.Hour
	maximumBackoff            = 32 * time.Hour
)

var copiedAnnotationPrefixes = []string{"*", "-kubectl.kubernetes.io/", "-fluxcd.io/", "-argocd.argoproj.io/"}

// runController runs every registered controller, as upstream's Run does after leader election
// (here: one instance, no election; no metrics, healthz or profiler servers).
func runController(ctx context.Context, kubeconfig, clusterResourceNamespace string) error {
	log := logf.FromContext(ctx)
	factory, err := controller.NewContextFactory(ctx, controller.ContextOptions{
		Kubeconfig:         kubeconfig,
		KubernetesAPIQPS:   kubernetesAPIQPS,
		KubernetesAPIBurst: kubernetesAPIBurst,
		IssuerOptions: controller.IssuerOptions{
			ClusterResourceNamespace: clusterResourceNamespace,
		},
		SchedulerOptions: controller.SchedulerOptions{MaxConcurrentChallenges: maxConcurrentChallenges},
		CertificateOptions: controller.CertificateOptions{
			CopiedAnnotationPrefixes:                 copiedAnnotationPrefixes,
			CertificateRequestMinimumBackoffDuration: minimumBackoff,
			CertificateRequestMaximumBackoffDuration: maximumBackoff,
		},
	})
	if err != nil {
		return err
	}
	base, err := factory.Build()
	if err != nil {
		return err
	}

	group, ctx := errgroup.WithContext(ctx)
	known := controller.Known()
	names := make([]string, 0, len(known))
	for name := range known {
		names = append(names, name)
	}
	sort.Strings(names)
	log.Info("starting controllers", "controllers", names)
	for _, name := range names {
		iface, err := known[name](factory)
		if err != nil {
			return fmt.Errorf("controller %s: %w", name, err)
		}
		group.Go(func() error { return iface.Run(numberOfConcurrentWorkers, ctx) })
	}
	// The informers the controllers registered while being constructed.
	base.SharedInformerFactory.Start(ctx.Done())
	base.KubeSharedInformerFactory.Start(ctx.Done())
	base.HTTP01ResourceMetadataInformersFactory.Start(ctx.Done())
	err = group.Wait()
	base.HTTP01ResourceMetadataInformersFactory.Shutdown()
	base.KubeSharedInformerFactory.Shutdown()
	base.SharedInformerFactory.Shutdown()
	return err
}

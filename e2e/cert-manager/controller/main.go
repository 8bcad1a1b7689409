// Command cert-manager-controller runs cert-manager's own certificate controllers (the packages of
// github.com/cert-manager/cert-manager/pkg/controller, which register themselves with
// pkg/controller.Register) against a cluster from a kubeconfig, with a Lease for leader election.
//
// Why this file exists: cert-manager's cmd/controller is a module of its own
// (github.com/cert-manager/cert-manager/controller-binary, directory cmd/controller) whose path
// names no directory of the repository, so the Go module proxy does not serve it; only the
// library module github.com/cert-manager/cert-manager is served. This program is the part of
// cmd/controller the e2e tests need, written against that library: the CA and self-signed
// issuers, the approver and the certificates controllers (issuing, key manager, readiness,
// request manager, revision manager, trigger). No ACME, Vault, Venafi, ingress or Gateway shims,
// no metrics or health server.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"

	controllerpkg "github.com/cert-manager/cert-manager/pkg/controller"
	logf "github.com/cert-manager/cert-manager/pkg/logs"

	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file")
	leNamespace := flag.String("leader-election-namespace", "cert-manager", "namespace of the leader election Lease")
	leID := flag.String("leader-election-id", "cert-manager-controller", "name of the leader election Lease")
	clusterNS := flag.String("cluster-resource-namespace", "cert-manager", "namespace of ClusterIssuers' Secrets")
	workers := flag.Int("concurrent-workers", 5, "workers per controller")
	klog.InitFlags(nil)
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = logf.NewContext(ctx, klog.NewKlogr().WithName("cert-manager"))

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		klog.Fatalf("kubeconfig: %v", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		klog.Fatalf("client: %v", err)
	}
	host, _ := os.Hostname()
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, *leNamespace, *leID,
		cs.CoreV1(), cs.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: fmt.Sprintf("%s_%d", host, os.Getpid())})
	if err != nil {
		klog.Fatalf("lease: %v", err)
	}
	leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
		Lock:            lock,
		ReleaseOnCancel: true,
		LeaseDuration:   60 * time.Second,
		RenewDeadline:   40 * time.Second,
		RetryPeriod:     15 * time.Second,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				if err := run(ctx, *kubeconfig, *clusterNS, *workers); err != nil {
					klog.Fatalf("%v", err)
				}
			},
			OnStoppedLeading: func() { klog.Info("leader election lost") },
		},
	})
}

func run(ctx context.Context, kubeconfig, clusterNS string, workers int) error {
	opts := controllerpkg.ContextOptions{
		Kubeconfig:         kubeconfig,
		KubernetesAPIQPS:   20,
		KubernetesAPIBurst: 50,
		IssuerOptions:      controllerpkg.IssuerOptions{ClusterResourceNamespace: clusterNS},
		CertificateOptions: controllerpkg.CertificateOptions{
			CertificateRequestMinimumBackoffDuration: time.Hour,
			CertificateRequestMaximumBackoffDuration: 32 * time.Hour,
		},
	}
	factory, err := controllerpkg.NewContextFactory(ctx, opts)
	if err != nil {
		return err
	}
	var names []string
	for name := range controllerpkg.Known() {
		names = append(names, name)
	}
	sort.Strings(names)
	var ctrls []controllerpkg.Interface
	for _, name := range names {
		c, err := controllerpkg.Known()[name](factory)
		if err != nil {
			return fmt.Errorf("controller %s: %w", name, err)
		}
		klog.InfoS("starting controller", "name", name)
		ctrls = append(ctrls, c)
	}
	shared, err := factory.Build()
	if err != nil {
		return err
	}
	shared.KubeSharedInformerFactory.Start(ctx.Done())
	shared.SharedInformerFactory.Start(ctx.Done())
	shared.HTTP01ResourceMetadataInformersFactory.Start(ctx.Done())
	var wg sync.WaitGroup
	for i, c := range ctrls {
		wg.Add(1)
		go func(name string, c controllerpkg.Interface) {
			defer wg.Done()
			if err := c.Run(workers, ctx); err != nil {
				klog.ErrorS(err, "controller ended", "name", name)
			}
		}(names[i], c)
	}
	wg.Wait()
	return nil
}

// Command cert-manager-cainjector runs cert-manager's own CA injector reconcilers
// (github.com/cert-manager/cert-manager/pkg/controller/cainjector RegisterAllInjectors) in a
// controller-runtime manager against a cluster from a kubeconfig, with a Lease for leader election.
//
// Why this file exists: cert-manager's cmd/cainjector is a module of its own
// (github.com/cert-manager/cert-manager/cainjector-binary) that the Go module proxy does not serve
// (its path names no directory of the repository); this is the part of it the e2e tests need,
// written against the served library module: injection into Validating and Mutating webhook
// configurations from a Certificate (cert-manager.io/inject-ca-from) or a Secret
// (cert-manager.io/inject-ca-from-secret). No metrics or health server.
package main

import (
	"flag"
	"os"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	kscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/cert-manager/cert-manager/pkg/controller/cainjector"
	"github.com/cert-manager/cert-manager/pkg/util"
)

func main() {
	// --kubeconfig is controller-runtime's own flag (pkg/client/config), read by ctrl.GetConfig.
	leNamespace := flag.String("leader-election-namespace", "cert-manager", "namespace of the leader election Lease")
	klog.InitFlags(nil)
	flag.Parse()
	ctrl.SetLogger(klog.NewKlogr().WithName("cainjector"))

	cfg, err := ctrl.GetConfig()
	if err != nil {
		klog.Fatalf("kubeconfig: %v", err)
	}
	// The user agent names the field manager of the caBundle's apply patches.
	cfg = util.RestConfigWithUserAgent(cfg, "cainjector")
	scheme := runtime.NewScheme()
	utilruntime.Must(kscheme.AddToScheme(scheme))
	utilruntime.Must(cmapi.AddToScheme(scheme))
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		LeaderElection:          true,
		LeaderElectionNamespace: *leNamespace,
		LeaderElectionID:        "cert-manager-cainjector-leader-election",
		// a stopped injector empties the Lease's holder, so the next one leads at once
		LeaderElectionReleaseOnCancel: true,
		Metrics:                       metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress:        "0",
		// Secrets are watched by their metadata only; their data is read uncached.
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
	})
	if err != nil {
		klog.Fatalf("manager: %v", err)
	}
	ctx := ctrl.SetupSignalHandler()
	if err := cainjector.RegisterAllInjectors(ctx, mgr, cainjector.SetupOptions{
		EnableCertificatesDataSource: true,
		EnabledReconcilersFor: map[string]bool{
			cainjector.ValidatingWebhookConfigurationName: true,
			cainjector.MutatingWebhookConfigurationName:   true,
		},
	}); err != nil {
		klog.Fatalf("injectors: %v", err)
	}
	if err := mgr.Start(ctx); err != nil {
		klog.Errorf("manager: %v", err)
		os.Exit(1)
	}
}

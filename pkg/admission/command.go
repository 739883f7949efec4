// SPDX-FileCopyrightText: 2026 The gardener-extension-backup contributors
//
// SPDX-License-Identifier: Apache-2.0

package admission

import (
	"fmt"
	"os"

	extensionscmdcontroller "github.com/gardener/gardener/extensions/pkg/controller/cmd"
	extensionscmdwebhook "github.com/gardener/gardener/extensions/pkg/webhook/cmd"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	"github.com/spf13/cobra"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// Defaults of the command's flags; ports as provider-aws's admission.
const (
	DefaultWebhookServerPort = 10250
)

// NewCommand returns the admission's command, serving v. --kubeconfig (or the GARDEN_KUBECONFIG
// gardener-operator injects) reaches the garden; --runtime-cluster keeps the certificates and the
// lease in the cluster the pod runs in (in-cluster, or --runtime-kubeconfig).
func NewCommand(v Validator) *cobra.Command {
	var (
		restOpts = &extensionscmdcontroller.RESTOptions{}
		mgrOpts  = &extensionscmdcontroller.ManagerOptions{
			LeaderElection:          true,
			LeaderElectionID:        Name + "-leader-election",
			LeaderElectionNamespace: os.Getenv("LEADER_ELECTION_NAMESPACE"),
			WebhookServerPort:       DefaultWebhookServerPort,
			WebhookCertDir:          os.TempDir() + "/" + Name + "-cert",
		}
		failurePolicy     = admissionregistrationv1.Fail
		runtimeCluster    bool
		runtimeKubeconfig string
		webhookOpts       = extensionscmdwebhook.NewAddToManagerOptions(Name, "", nil, nil, &extensionscmdwebhook.ServerOptions{},
			extensionscmdwebhook.NewSwitchOptions(Switches(v, &failurePolicy)...))
		aggOpts = extensionscmdcontroller.NewOptionAggregator(restOpts, mgrOpts, webhookOpts)
	)
	cmd := &cobra.Command{
		Use:          Name,
		Short:        "Validates the backup providerConfig of core Seeds and BackupBuckets in the garden",
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if restOpts.Kubeconfig == "" {
				restOpts.Kubeconfig = os.Getenv(v1beta1constants.EnvGenericGardenKubeconfig)
			}
			if err := aggOpts.Complete(); err != nil {
				return fmt.Errorf("completing options: %w", err)
			}
			switch failurePolicy {
			case admissionregistrationv1.Fail, admissionregistrationv1.Ignore:
			default:
				return fmt.Errorf("--webhook-failure-policy must be Fail or Ignore, got %q", failurePolicy)
			}
			if webhookOpts.Completed().Server.Namespace == "" {
				return fmt.Errorf("--%s is required: the namespace of the webhook certificates' secrets", extensionscmdwebhook.NamespaceFlag)
			}
			mgrCfg := mgrOpts.Completed()
			logf.SetLogger(mgrCfg.Logger)
			var runtimeCfg *rest.Config
			if runtimeCluster {
				var err error
				if runtimeCfg, err = clientcmd.BuildConfigFromFlags("", runtimeKubeconfig); err != nil {
					return fmt.Errorf("runtime cluster: %w", err)
				}
			}
			return Run(cmd.Context(), Config{
				Garden:   restOpts.Completed().Config,
				Runtime:  runtimeCfg,
				Manager:  mgrCfg.Options(),
				Webhooks: webhookOpts.Completed(),
			})
		},
	}
	aggOpts.AddFlags(cmd.Flags())
	cmd.Flags().StringVar((*string)(&failurePolicy), "webhook-failure-policy", string(failurePolicy), "What the garden's API server does with a Seed or BackupBucket of these types when the webhook cannot be reached: Fail (refuse it) or Ignore (admit it unchecked).")
	cmd.Flags().BoolVar(&runtimeCluster, "runtime-cluster", false, "Keep the certificates' secrets and the leader election lease in the runtime cluster (in-cluster, or --runtime-kubeconfig) instead of the --kubeconfig cluster: the virtual garden setup.")
	cmd.Flags().StringVar(&runtimeKubeconfig, "runtime-kubeconfig", "", "Kubeconfig of the runtime cluster with --runtime-cluster (empty: in-cluster).")
	return cmd
}

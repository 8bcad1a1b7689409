/*
 * gang.h - gang-waiting, and queue-waiting from KAI-Scheduler / Volcano PodGroups: the ladder's
 * steps for a pod that belongs to a gang (model/gang.h), after ok and before scheduling-gated
 * (classify.h). Internal to core/classify but for struct gang_facts, which core/triage fills.
 *
 * queue-waiting (checked first): the group's queue holds it back for quota:
 *   KAI      status.schedulingConditions[].reasons[].reason NonPreemptibleOverQuota, OverLimit or
 *            QueueDoesNotExist (kai-scheduler/KAI-Scheduler: pkg/scheduler/api/unschedule_info.go),
 *            or an Event on the PodGroup whose message says so;
 *   Volcano  an Event on the PodGroup "queue resource quota insufficient[: ...]"
 * (volcano-sh/volcano: pkg/scheduler/plugins/capacity/capacity.go,
 * plugins/proportion/proportion.go). The detail quotes the reason and names the PodGroup and its
 * Queue. gang-waiting: the group needs more members than exist: minMember (KAI, Volcano), the gang
 * policy's minCount (upstream PodGroup; a 1.35 Workload's podGroups[].policy.gang.minCount of the
 * pod's workloadRef.podGroup) above the member pods that exist and are not gated, or the group does
 * not exist (where its kind is read); for KAI and upstream groups only while the pod has no
 * PodScheduled condition other than SchedulingGated (a scheduler that tried the pod does not hold
 * it for its gang: on 1.35 and 1.36 kube-scheduler enforces gangs only with the GangScheduling
 * gate). The scheduler does not try such a pod: KAI writes only a PodGroup Event NotReady
 * (pkg/scheduler/cache/status_updater/ default_status_updater.go), kube-scheduler's GangScheduling
 * PreEnqueue keeps it out of the active queue (no PodScheduled condition: kubernetes/kubernetes:
 * pkg/scheduler/framework/ plugins/gangscheduling), Volcano waits in the gang plugin. Pure;
 * thread-safe on read-only input.
 */
#ifndef GPUTRI_CLASSIFY_GANG_H
#define GPUTRI_CLASSIFY_GANG_H

#include <stdbool.h>
#include <stddef.h>

#include "classify/classify.h"
#include "classify/line.h"
#include "model/gang.h"

/*
 * gang_word() - for an unbound pod with a gang link: CAUSE_QUEUE_WAITING or CAUSE_GANG_WAITING
 * with the detail appended to `l`, else CAUSE_COUNT (nothing written). `f` may be NULL. Pure.
 */
enum cause gang_word(const struct kpod *pod, const struct gang_facts *f, struct line *l);

#endif

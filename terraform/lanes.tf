# Lanes (three priorities, render, processing and documents) and the worker services they push to. Only variables are referenced here, so
# tests/deploy evaluate these locals with `terraform console` (no provider needed).

locals {
  lanes = toset(var.lanes)

  # topology.in_lane: the normal lane keeps the base names (as deployed before lanes), every
  # other lane appends -<lane>. The services publish to in_lane(SCRAPEJOBS_TASK_TOPIC, lane).
  lane_suffix = { for lane in var.lanes : lane => lane == "normal" ? "" : "-${lane}" }
  lane_names = {
    for lane in var.lanes : lane => {
      task_topic               = "${var.task_topic}${local.lane_suffix[lane]}"
      dead_letter_topic        = "${var.dead_letter_topic}${local.lane_suffix[lane]}"
      task_subscription        = "${var.task_subscription}${local.lane_suffix[lane]}"
      dead_letter_subscription = "${var.dead_letter_subscription}${local.lane_suffix[lane]}"
    }
  }

  # Worker services: "shared" (<prefix>-worker) serves every priority lane not listed in
  # dedicated_lane_workers; a listed lane gets its own service <prefix>-worker-<lane>, with the
  # same image, environment and identity and its own instance counts. The render lane always
  # has its own: the renderer (<prefix>-renderer), the worker with Chromium (role "renderer":
  # its own image, memory, concurrency; cloud_run.tf), so plain jobs never wait behind a browser.
  # `cpu` and `memory`: a dedicated worker's own (the documents lane's reads need more), null:
  # its role's.
  worker_services = merge(
    {
      shared = {
        name          = "${var.name_prefix}-worker"
        min_instances = var.worker_min_instances
        max_instances = var.worker_max_instances
        role          = "worker"
        cpu           = null
        memory        = null
      }
    },
    {
      for lane, worker in var.dedicated_lane_workers : lane => {
        name          = "${var.name_prefix}-worker-${lane}"
        min_instances = worker.min_instances
        max_instances = worker.max_instances
        role          = "worker"
        cpu           = worker.cpu
        memory        = worker.memory
      }
    },
    {
      render = {
        name          = "${var.name_prefix}-renderer"
        min_instances = var.renderer_min_instances
        max_instances = var.renderer_max_instances
        role          = "renderer"
        cpu           = null
        memory        = null
      }
    },
  )

  # The worker service (key of worker_services) each lane's two subscriptions push to.
  lane_worker = {
    for lane in var.lanes : lane => lane == "render" ? "render" : contains(keys(var.dedicated_lane_workers), lane) ? lane : "shared"
  }
}

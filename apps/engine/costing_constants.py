"""Named constants of the costing core, each with where its value comes from.

Values marked "house judgement" have no public benchmark behind them: they are defaults that an
organisation should replace with its own figures (through `FinanceAssumptions`), and every
candidate row's notes say when one was used.
"""

from __future__ import annotations

from decimal import Decimal

# --- Calendar -------------------------------------------------------------------------------------

# 8,760 hours a year / 12. The convention the AWS Pricing Calculator uses for "a month" of an
# always-on instance (https://calculator.aws, "730 hours in a month").
HOURS_PER_MONTH = Decimal(730)
MONTHS_PER_YEAR = Decimal(12)
SECONDS_PER_HOUR = Decimal(3600)
MINUTES_PER_HOUR = Decimal(60)
TOKENS_PER_MTOK = Decimal(1_000_000)
BYTES_PER_GB = Decimal(1_000_000_000)  # GB = 10^9 bytes, as everywhere in gpuselect
WATTS_PER_KW = Decimal(1000)

# --- Output quantization --------------------------------------------------------------------------

MONEY_QUANTUM = Decimal("0.0001")  # 4 dp, as CandidateRow.monthly_cost stores it
OUTPUT_QUANTUM = Decimal("0.0001")  # 4 dp, as CandidateRow.accepted_outputs_per_month
RATE_QUANTUM = Decimal("0.0001")  # utilizations and break-even shares
UNIT_COST_SIGNIFICANT_DIGITS = 10

# --- GPU reliability (training) -------------------------------------------------------------------

# Unexpected job interruptions per GPU-hour of a large synchronous training job. Llama 3 paper
# ("The Llama 3 Herd of Models", Meta, 2024, section 3.3.4): 419 unexpected interruptions in a
# 54-day snapshot of pre-training on 16,384 H100s, ~78% of them hardware (GPU 30.1%, HBM3 17.2%).
# 419 / (16,384 GPUs x 54 d x 24 h = 21,233,664 GPU-hours) = 1.973e-5; kept to 3 figures.
# OPT-175B's logbook (Meta, 2022) tells the same story: ~53 restarts in ~56 days on 992 A100s.
GPU_INTERRUPTION_RATE_PER_GPU_HOUR = Decimal("0.0000197")

# Minutes from an interruption to training again (detect, reschedule, reload the checkpoint,
# re-form NCCL communicators). House judgement: Meta reports all but 3 of the 419 Llama 3
# interruptions were handled by automation, i.e. restarts are minutes, not hours; the manual
# restarts in the OPT-175B logbook took far longer (set this higher without automation).
CHECKPOINT_RESTART_MINUTES = Decimal(15)

# Checkpoint interval when the brief gives none. House judgement (hourly is a common default);
# the Young/Daly rule, interval = sqrt(2 x write time x MTBF), gives the cost-optimal value.
DEFAULT_CHECKPOINT_INTERVAL_MINUTES = Decimal(60)

# --- Spot capacity --------------------------------------------------------------------------------

# Extra GPU-hours paid on spot for work lost and restarted after reclaims. AWS's Spot Instance
# Advisor reports the share of instances reclaimed in the trailing month in bands <5%, 5-10%,
# 10-15%, 15-20%, >20% (https://aws.amazon.com/ec2/spot/instance-advisor/); GPU pools sit in the
# upper bands. House judgement: 10% of the busy hours are lost and re-run.
SPOT_INTERRUPTION_OVERHEAD = Decimal("0.10")

# --- Power and hosting (owned hardware) -----------------------------------------------------------

# Power usage effectiveness: total site power / IT power. Uptime Institute Global Data Center
# Survey: industry average flat at 1.55-1.59 since 2020 (1.58 in 2023, 1.56 in 2024).
DEFAULT_PUE = Decimal("1.56")

# US average industrial electricity price, ~8 cents/kWh (EIA Electric Power Monthly, table 5.6.A,
# industrial sector, 2023-2024 averages 8.0-8.3 cents).
DEFAULT_POWER_PRICE_PER_KWH = Decimal("0.08")

# Colocation rent per kW of IT load per month (space, cooling, power capacity; energy billed on
# top). CBRE North America Data Center Trends H2 2018: $120-140 per kW-month for 250 kW turnkey
# wholesale at N+1; CBRE's 2023-2024 reports record rising asking rates in primary markets, and
# 2026 market summaries put tier-1 wholesale at ~$140-160. $150 sits in that recent range.
DEFAULT_COLOCATION_PER_KW_MONTH = Decimal(150)

# kW of IT load per GPU in an 8-GPU server: NVIDIA DGX H100 datasheet, 10.2 kW system max / 8 GPUs.
SERVER_KW_PER_GPU = Decimal("1.275")

# The host's share of a GPU server's power, per GPU, on top of the GPU's own TDP (CPUs, memory,
# NVSwitches, NICs, fans, drives): the DGX H100 system maximum (10.2 kW, NVIDIA DGX H100
# datasheet and user guide, "System power usage ~10.2 kW max") / 8 GPUs = 1.275 kW, less the
# H100 SXM's 700 W TDP = 0.575 kW. An owned quote without its own figure draws TDP + this.
HOST_KW_PER_GPU = SERVER_KW_PER_GPU - Decimal("0.700")

# Depreciation of bought GPU servers, for illustration (owned quotes carry their own months):
# hyperscalers depreciate servers over 5-6 years (Microsoft and Alphabet 10-K filings, 2022-2023;
# CoreWeave's S-1: 6 years for GPUs); 5 years is the conservative end for accelerators that a
# newer generation obsoletes.
ILLUSTRATIVE_DEPRECIATION_MONTHS = 60

# Capex per H100 GPU in an 8-GPU HGX/DGX server, for illustration and tests only (quotes carry
# their own): SemiAnalysis (May 2023, via Epoch AI's training-cost-trends) ~$270,000 per DGX H100;
# DGX H100 list $199,000 + support; so ~$250k-$300k per 8-GPU server, ~$34,000 per GPU.
ILLUSTRATIVE_H100_CAPEX_PER_GPU = Decimal(34_000)

# Datacentre hands-on hours per owned GPU per month (RMA, reseating, firmware), on top of the
# platform team's hours; costed at the finance labour rate as the owned GPU's "operations", per
# GPU (hands-on work scales with the servers, not with the deployments). House judgement: ~4 h per
# 8-GPU server a month, consistent with Llama 3's ~one hardware interruption per 50,000 GPU-hours
# mostly handled by automation.
HARDWARE_OPS_HOURS_PER_GPU_MONTH = Decimal("0.5")

# --- People ---------------------------------------------------------------------------------------

# Hours in a full-time-equivalent year (52 weeks x 40 h), to turn salaries into hourly rates.
FTE_HOURS_PER_YEAR = Decimal(2080)

# Loaded platform/SRE labour per hour, USD. Gremlin's SRE compensation research (2020; Payscale,
# Hired, Glassdoor, BLS): median total compensation $236,000 / 2,080 h = $113.5/h; rounded to $115.
DEFAULT_LABOUR_RATE_PER_HOUR = Decimal(115)

# Platform labour hours per month to keep one workload running, by operating model.
# House judgement, in FTE terms (173 h a month): self-managed GPUs (drivers, serving framework
# upgrades, autoscaling, on-call) ~1/4 FTE; a provider-managed endpoint ~1/16; a model API
# (keys, quotas, prompt/version pinning, vendor monitoring) ~1/40.
PLATFORM_LABOUR_HOURS_SELF_MANAGED = Decimal(40)
PLATFORM_LABOUR_HOURS_MANAGED_ENDPOINT = Decimal(10)
PLATFORM_LABOUR_HOURS_API = Decimal(4)

# --- Overheads as shares of the GPU bill ----------------------------------------------------------

# Observability spend as a share of the compute bill. Industry medians put it at 7-12% of cloud
# infrastructure cost (Flexera State of the Cloud / CNCF, as summarised by monitoringcost.com,
# 2026); Honeycomb (C. Majors, 2025) says 15-25% for teams with good observability. Vendors bill
# per host, and a GPU host costs ~10x a CPU host, so GPU-heavy bills sit below the median: 5%.
DEFAULT_OBSERVABILITY_SHARE = Decimal("0.05")

# Gateway, load balancer, autoscaler and CPU-side tokenisation next to real-time GPU replicas, as a
# share of the GPU bill. House judgement: a pair of 8-vCPU CPU nodes (~$0.35/h each on AWS c7i)
# is <1% beside an 8-GPU H100 node (~$98/h) but ~90% beside one L4 (~$0.80/h); 5% fits the
# one-to-few-node deployments gpuselect mostly compares.
SERVING_STACK_SHARE = Decimal("0.05")

# Queue and worker overhead of media pipelines (job queue, model load on cold workers, result
# upload), as a share of the GPU bill. House judgement: ~3% of worker time spent loading/handing
# off between renders on a warm pool.
QUEUE_OVERHEAD_SHARE = Decimal("0.03")

# --- Media ----------------------------------------------------------------------------------------

# Automated moderation per image: Amazon Rekognition DetectModerationLabels (Group 2 image API),
# $0.0010 per image for the first 1M images a month (https://aws.amazon.com/rekognition/pricing/).
MODERATION_COST_PER_IMAGE = Decimal("0.001")

# Automated moderation per minute of video: Amazon Rekognition Video content moderation on stored
# video, $0.10 per minute (https://aws.amazon.com/rekognition/pricing/).
MODERATION_COST_PER_VIDEO_MINUTE = Decimal("0.10")

# Clip length when the brief gives none. House judgement: generated clips are typically 4-10 s
# (Sora, Veo and Runway default lengths); 5 s.
DEFAULT_CLIP_SECONDS = Decimal(5)

# Share of successful renders a person reviews, and minutes each. House judgement (spot-check
# sampling): 5% reviewed, 0.5 min per image, 2 min per clip.
OPERATOR_REVIEW_SHARE = Decimal("0.05")
OPERATOR_REVIEW_MINUTES_PER_IMAGE = Decimal("0.5")
OPERATOR_REVIEW_MINUTES_PER_CLIP = Decimal(2)

# --- Storage and egress defaults ------------------------------------------------------------------

# Storage per brief when none is given: weights, checkpoints/artefacts and logs. House judgement:
# 1 TB holds a 70B model in BF16 (140 GB) or an 8B full fine-tune's AdamW checkpoints (~128 GB
# each) several times over.
DEFAULT_STORAGE_TB = Decimal(1)

# Bytes leaving the provider per generated output, when the brief gives no egress volume.
# Text: ~4 characters per token (OpenAI, "What are tokens and how to count them?"), UTF-8 ~1 byte
# per character; embeddings: 1,024 float32 dimensions = 4,096 bytes; image: a 1024x1024 PNG is
# ~1.5 MB; clip: 5 s of 720p H.264 at ~5 Mbit/s ~ 3 MB. Training and evaluation outputs are
# artefacts kept in storage, not egress.
EGRESS_BYTES_PER_TOKEN = Decimal(4)
EGRESS_BYTES_PER_EMBEDDING = Decimal(4096)
EGRESS_BYTES_PER_IMAGE = Decimal(1_500_000)
EGRESS_BYTES_PER_CLIP = Decimal(3_000_000)

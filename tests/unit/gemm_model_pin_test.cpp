// Pins the Hopper model's predictions: the predicted time of a fixed set of (shape, candidate)
// pairs under fixed scalars (the h200 calibration of commit 7872ba4), recorded before the model was
// split into per-vendor classes. Refactors must reproduce them exactly; a deliberate model change
// updates the table in the same commit and says which rows moved and why. History: the rows of
// misaligned shapes (alignment < 16 bytes, no TMA) moved when those kernels got their own model
// (co-resident CTAs, reduction kinds; model_hopper_legacy.cpp), and again when each of their
// CTAs paid its pipeline fill and the cp.async families their own stage count, and the 4- and
// 8-byte rows whose tile is not 128x128 again when the cp.async kernels' rate got its operand-feed
// factor (I / (I + 32), 1 at 128x128); every TMA row is as recorded. The two rows of 32- and
// 128-deep tiles without TMA were added when their exposed latency per K-iteration became a time
// (no 64-deep row moved), and every row without TMA again when each wave paid one tile's output
// store per SM (model_hopper_legacy.cpp), once more when the per-CTA pipeline fill went and
// the 2-byte rows got the operand-feed factor too, and the rows of tiles below 128x128 without TMA
// when their exposed latency became the reference tile's time (not their own slower iterations').
// Rows: real cuBLASLt candidates of the run-21 evaluation measurements (TMA-aligned and
// misaligned shapes) and the modelled space on batched, split-K-prone and odd shapes.
#include <gtest/gtest.h>

#include <array>
#include <iomanip>

#include "parity/gemm/model.hpp"
#include "parity/hw/catalogue.hpp"

namespace parity::gemm {
namespace {

struct PinnedPrediction {
  std::int64_t m, n, k, batch;
  const char* candidate;
  double predicted_us;
};

// clang-format off
constexpr PinnedPrediction kPinned[] = {
    {1024, 28672, 4096, 1, "tile=128x128x64 cluster=2x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=1 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=3", 355.31734493396254},
    {1024, 28672, 4096, 1, "tile=128x128x64 cluster=2x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=4 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 378.95234939612089},
    {1024, 28672, 4096, 1, "tile=256x128x64 cluster=2x2 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=5 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 468.3229233505017},
    {1024, 28672, 4096, 1, "tile=192x128x64 cluster=2x2 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=4 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 511.65640368386505},
    {1024, 28672, 4096, 1, "tile=64x64x64 cluster=2x2 mi=64x64x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=7 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 646.54104439586729},
    {1024, 28672, 4096, 1, "tile=256x64x64 cluster=2x1 mi=64x64x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=0 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 435.59039020485767},
    {1024, 28672, 4096, 1, "tile=168x128x64 cluster=2x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=0 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 441.23697332810099},
    {16384, 4096, 4096, 1, "tile=128x128x64 cluster=1x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=3 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 918.44793339114642},
    {16384, 4096, 4096, 1, "tile=128x128x64 cluster=2x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=4 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 859.74760797683552},
    {16384, 4096, 4096, 1, "tile=256x128x64 cluster=1x2 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=4 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 776.87358466733895},
    {16384, 4096, 4096, 1, "tile=192x128x64 cluster=2x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=7 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 773.21773347202122},
    {16384, 4096, 4096, 1, "tile=64x64x64 cluster=2x1 mi=64x64x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=7 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 1347.7100736956072},
    {16384, 4096, 4096, 1, "tile=64x256x64 cluster=2x2 mi=64x256x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=0 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 1050.9319227657436},
    {16384, 4096, 4096, 1, "tile=160x128x64 cluster=1x2 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=0 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 746.85616668113755},
    {8192, 128, 256, 1, "tile=64x64x64 cluster=1x2 mi=64x64x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 8.0588462662667499},
    {8192, 128, 256, 1, "tile=128x128x64 cluster=1x2 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=1 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 8.8964995976451604},
    {8192, 128, 256, 1, "tile=128x256x64 cluster=1x1 mi=64x256x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=5 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 11.27596846365126},
    {8192, 128, 256, 1, "tile=128x192x64 cluster=1x1 mi=64x192x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=5 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 9.9515637855895367},
    {8192, 128, 256, 1, "tile=64x256x64 cluster=1x1 mi=64x256x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 9.133122263791023},
    {8192, 128, 256, 1, "tile=160x128x64 cluster=2x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 8.4701618608966598},
    {8192, 128, 256, 1, "tile=64x64x64 cluster=1x2 mi=64x64x16 splitk=2 red=compute decomp=dp skgrid=0 stages=0 family=66 variant=0 occ=1 group=1 raster=auto xcd=rr ws=8388628 hrank=-1", 13.270054312620196},
    {8192, 1024, 1024, 1, "tile=128x128x64 cluster=1x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=0 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 36.168771743176897},
    {8192, 1024, 1024, 1, "tile=128x128x64 cluster=2x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=5 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 34.729196378539328},
    {8192, 1024, 1024, 1, "tile=256x128x64 cluster=2x2 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=4 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 50.393656459319871},
    {8192, 1024, 1024, 1, "tile=192x128x64 cluster=1x2 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=6 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 34.929905201643194},
    {8192, 1024, 1024, 1, "tile=64x64x64 cluster=1x2 mi=64x64x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=7 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 52.274612580317218},
    {8192, 1024, 1024, 1, "tile=256x64x64 cluster=1x1 mi=64x64x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=0 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 40.301460889653903},
    {8192, 1024, 1024, 1, "tile=160x128x64 cluster=2x2 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=0 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 40.275669415694082},
    {65536, 512, 16, 1, "tile=128x128x64 cluster=1x2 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=3 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=6", 27.592673736699012},
    {65536, 512, 16, 1, "tile=128x128x64 cluster=2x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=2 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 27.585776015604537},
    {65536, 512, 16, 1, "tile=256x128x64 cluster=2x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=7 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 25.773503780375847},
    {65536, 512, 16, 1, "tile=192x128x64 cluster=1x2 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=6 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 26.888524138634853},
    {65536, 512, 16, 1, "tile=64x64x64 cluster=1x2 mi=64x64x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=7 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 42.254610038539589},
    {65536, 512, 16, 1, "tile=256x64x64 cluster=1x1 mi=64x64x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=0 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 27.649420749837585},
    {65536, 512, 16, 1, "tile=168x128x64 cluster=1x2 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=0 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 31.744346116956045},
    {256, 128, 65536, 1, "tile=64x64x64 cluster=2x1 mi=64x64x16 splitk=16 red=compute decomp=dp skgrid=0 stages=0 family=66 variant=1 occ=1 group=1 raster=auto xcd=rr ws=2097168 hrank=0", 19.601538404683339},
    {256, 128, 65536, 1, "tile=128x128x64 cluster=2x2 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 346.57088038694371},
    {256, 128, 65536, 1, "tile=128x256x64 cluster=1x2 mi=64x256x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=4 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 630.51827413790124},
    {256, 128, 65536, 1, "tile=128x192x64 cluster=1x2 mi=64x192x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=4 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 450.78903233279169},
    {256, 128, 65536, 1, "tile=64x256x64 cluster=1x1 mi=64x256x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 313.21521553305899},
    {256, 128, 65536, 1, "tile=160x128x64 cluster=1x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 355.4123091408016},
    {256, 128, 65536, 1, "tile=64x64x64 cluster=1x1 mi=64x64x16 splitk=8 red=compute decomp=dp skgrid=0 stages=0 family=66 variant=0 occ=1 group=1 raster=auto xcd=rr ws=1048592 hrank=-1", 22.079873115459179},
    {65536, 1024, 512, 1, "tile=128x128x64 cluster=1x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=1 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 129.27873912446884},
    {65536, 1024, 512, 1, "tile=128x128x64 cluster=2x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=6 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 129.50069111582997},
    {65536, 1024, 512, 1, "tile=256x128x64 cluster=1x2 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=5 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 120.05332911724291},
    {65536, 1024, 512, 1, "tile=192x128x64 cluster=2x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=6 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 117.75552881338403},
    {65536, 1024, 512, 1, "tile=64x64x64 cluster=2x1 mi=64x64x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=0 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 200.04615583124917},
    {65536, 1024, 512, 1, "tile=64x256x64 cluster=1x2 mi=64x256x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=7 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 150.50310646077369},
    {65536, 1024, 512, 1, "tile=168x128x64 cluster=1x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=0 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 117.63182841358639},
    {8192, 1024, 3456, 1, "tile=128x128x64 cluster=2x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=1 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=4", 91.061065138144045},
    {8192, 1024, 3456, 1, "tile=128x128x64 cluster=2x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=4 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 96.737314108464275},
    {8192, 1024, 3456, 1, "tile=256x128x64 cluster=1x2 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=6 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 89.717999540079376},
    {8192, 1024, 3456, 1, "tile=192x128x64 cluster=2x2 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=4 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 115.34493044579634},
    {8192, 1024, 3456, 1, "tile=64x64x64 cluster=2x2 mi=64x64x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=7 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 167.26513870887572},
    {8192, 1024, 3456, 1, "tile=256x64x64 cluster=2x1 mi=64x64x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=0 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 109.68984694108039},
    {8192, 1024, 3456, 1, "tile=168x128x64 cluster=2x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=0 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 105.45746643617198},
    {32768, 2048, 512, 1, "tile=128x128x64 cluster=1x2 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=2 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 114.77258519523637},
    {32768, 2048, 512, 1, "tile=128x128x64 cluster=2x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=4 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 129.30126673436754},
    {32768, 2048, 512, 1, "tile=256x128x64 cluster=1x2 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=5 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 120.03723621542626},
    {32768, 2048, 512, 1, "tile=192x128x64 cluster=2x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=6 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 118.07878325033961},
    {32768, 2048, 512, 1, "tile=64x64x64 cluster=2x1 mi=64x64x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=0 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 200.04615583124917},
    {32768, 2048, 512, 1, "tile=64x256x64 cluster=1x2 mi=64x256x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=7 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 150.50310646077369},
    {32768, 2048, 512, 1, "tile=168x128x64 cluster=1x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=0 occ=1 group=1 raster=auto xcd=rr ws=4 hrank=-1", 117.85907058161096},
    {16, 4096, 4096, 1, "tile=16x64x64 cluster=1x1 mi=16x64x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 14.027538722439349},
    {16, 4096, 4096, 1, "tile=128x128x64 cluster=1x2 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=5 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 27.408363347199227},
    {16, 4096, 4096, 1, "tile=128x256x64 cluster=2x1 mi=64x256x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=5 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 48.971233366669722},
    {16, 4096, 4096, 1, "tile=128x192x64 cluster=2x1 mi=64x192x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=5 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 37.379550662454577},
    {16, 4096, 4096, 1, "tile=128x64x64 cluster=1x2 mi=64x64x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=7 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 18.689245325521618},
    {16, 4096, 4096, 1, "tile=144x128x64 cluster=2x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=66 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 28.779872973936225},
    {16, 4096, 4096, 1, "tile=64x64x64 cluster=1x1 mi=64x64x16 splitk=4 red=compute decomp=dp skgrid=0 stages=0 family=66 variant=0 occ=1 group=1 raster=auto xcd=rr ws=2097168 hrank=-1", 16.373072792759469},
    {777, 1234, 4321, 1, "tile=64x128x64 cluster=1x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=24 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 417.12225865773792},
    {777, 1234, 4321, 1, "tile=64x64x64 cluster=2x1 mi=64x64x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=24 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 458.93562191856},
    {777, 1234, 4321, 1, "tile=128x64x64 cluster=1x1 mi=64x64x16 splitk=4 red=compute decomp=dp skgrid=0 stages=0 family=24 variant=0 occ=1 group=1 raster=auto xcd=rr ws=15341088 hrank=-1", 309.95724019834029},
    {25854, 751, 3454, 1, "tile=256x128x64 cluster=1x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=3 family=23 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 1277.0869208492263},
    {25854, 751, 3454, 1, "tile=64x128x64 cluster=1x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=4 family=23 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=5", 2227.4347536847049},
    {25854, 751, 3454, 1, "tile=256x128x32 cluster=1x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=3 family=23 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 1696.9692317900669},
    {777, 1234, 4321, 1, "tile=32x32x128 cluster=1x1 mi=16x8x16 splitk=1 red=none decomp=dp skgrid=0 stages=3 family=23 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 663.84102855215292},
    {25854, 751, 3454, 1, "tile=64x128x64 cluster=1x2 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=3 family=23 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 1930.5917305701948},
    {1595, 8623, 2243, 1, "tile=128x128x64 cluster=1x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=24 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 1450.3537785957492},
    {1595, 8623, 2243, 1, "tile=256x128x64 cluster=1x1 mi=64x128x16 splitk=3 red=inplace decomp=dp skgrid=0 stages=0 family=24 variant=0 occ=1 group=1 raster=auto xcd=rr ws=1904 hrank=5", 1285.0444001368724},
    {1595, 8623, 2243, 1, "tile=64x64x64 cluster=1x2 mi=64x64x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=24 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 2337.1349962839927},
    {66, 1377, 560, 1, "tile=64x128x64 cluster=1x1 mi=64x128x16 splitk=4 red=compute decomp=dp skgrid=0 stages=3 family=23 variant=0 occ=1 group=1 raster=auto xcd=rr ws=1454112 hrank=-1", 17.285324934564571},
    {66, 1377, 560, 1, "tile=64x128x64 cluster=2x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=3 family=23 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 33.821641209755725},
    {66, 1377, 560, 1, "tile=128x128x64 cluster=1x1 mi=64x128x16 splitk=4 red=compute decomp=dp skgrid=0 stages=3 family=23 variant=0 occ=1 group=1 raster=auto xcd=rr ws=1454112 hrank=-1", 20.135702279993481},
    {2237, 2737, 5024, 1, "tile=128x128x64 cluster=1x1 mi=64x128x16 splitk=2 red=compute decomp=dp skgrid=0 stages=0 family=24 variant=0 occ=1 group=1 raster=auto xcd=rr ws=48981352 hrank=-1", 1336.067537388876},
    {2237, 2737, 5024, 1, "tile=128x128x64 cluster=1x2 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=24 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 1444.0824822067345},
    {2237, 2737, 5024, 1, "tile=64x128x64 cluster=2x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=24 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 1688.5421066080478},
    {23805, 19230, 1052, 1, "tile=256x128x64 cluster=1x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=24 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 17226.637952540481},
    {23805, 19230, 1052, 1, "tile=128x128x64 cluster=1x1 mi=64x128x16 splitk=3 red=inplace decomp=dp skgrid=0 stages=0 family=24 variant=0 occ=1 group=1 raster=auto xcd=rr ws=112344 hrank=4", 21660.765673626283},
    {23805, 19230, 1052, 1, "tile=64x64x64 cluster=1x2 mi=64x64x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=24 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 35418.852847941132},
    {368, 5989, 2669, 1, "tile=128x128x64 cluster=1x1 mi=64x128x16 splitk=3 red=compute decomp=dp skgrid=0 stages=0 family=24 variant=0 occ=1 group=1 raster=auto xcd=rr ws=26447424 hrank=-1", 283.13566948281681},
    {368, 5989, 2669, 1, "tile=128x256x64 cluster=1x2 mi=64x256x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=24 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 400.05085531725734},
    {368, 5989, 2669, 1, "tile=64x128x64 cluster=1x2 mi=64x128x16 splitk=2 red=compute decomp=dp skgrid=0 stages=0 family=24 variant=0 occ=1 group=1 raster=auto xcd=rr ws=17631616 hrank=-1", 382.4256333953},
    {4397, 470, 175, 1, "tile=128x128x64 cluster=2x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=24 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 29.62676520606027},
    {4397, 470, 175, 1, "tile=64x128x64 cluster=2x1 mi=64x128x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=24 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 32.627692304400597},
    {4397, 470, 175, 1, "tile=128x64x64 cluster=1x2 mi=64x64x16 splitk=8 red=compute decomp=dp skgrid=0 stages=0 family=24 variant=0 occ=1 group=1 raster=auto xcd=rr ws=66130880 hrank=-1", 93.275928902636196},
    {512, 512, 8192, 8, "tile=64x64x64 cluster=2x1 mi=64x64x16 splitk=2 red=compute decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 91.664644632991795},
    {512, 512, 8192, 8, "tile=64x192x64 cluster=1x2 mi=64x192x16 splitk=4 red=compute decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 112.77307099322044},
    {512, 512, 8192, 8, "tile=128x64x64 cluster=2x2 mi=64x64x16 splitk=8 red=compute decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 100.56165124848565},
    {512, 512, 8192, 8, "tile=128x256x64 cluster=2x1 mi=64x256x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 86.159719204021627},
    {512, 512, 8192, 8, "tile=192x128x64 cluster=1x2 mi=64x128x16 splitk=2 red=compute decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 75.627700130907868},
    {512, 512, 8192, 8, "tile=192x256x64 cluster=2x2 mi=64x256x16 splitk=4 red=compute decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 129.22996426153159},
    {512, 512, 8192, 8, "tile=256x192x64 cluster=1x1 mi=64x192x16 splitk=8 red=compute decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 81.834043113453703},
    {96, 4096, 16384, 1, "tile=64x64x64 cluster=2x1 mi=64x64x16 splitk=2 red=compute decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 46.88680558587572},
    {96, 4096, 16384, 1, "tile=64x192x64 cluster=1x2 mi=64x192x16 splitk=4 red=compute decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 52.074262785524787},
    {96, 4096, 16384, 1, "tile=128x64x64 cluster=2x2 mi=64x64x16 splitk=8 red=compute decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 83.597254281539975},
    {96, 4096, 16384, 1, "tile=128x256x64 cluster=2x1 mi=64x256x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 155.00166297889061},
    {96, 4096, 16384, 1, "tile=192x128x64 cluster=1x2 mi=64x128x16 splitk=2 red=compute decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 65.924399422730829},
    {96, 4096, 16384, 1, "tile=192x256x64 cluster=2x2 mi=64x256x16 splitk=4 red=compute decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 152.02431238714763},
    {96, 4096, 16384, 1, "tile=256x192x64 cluster=1x1 mi=64x192x16 splitk=8 red=compute decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 75.958081446284794},
    {8192, 8192, 8192, 1, "tile=64x64x64 cluster=2x1 mi=64x64x16 splitk=2 red=compute decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 2705.6462800127856},
    {8192, 8192, 8192, 1, "tile=64x192x64 cluster=1x2 mi=64x192x16 splitk=4 red=compute decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 2380.9925395493947},
    {8192, 8192, 8192, 1, "tile=128x64x64 cluster=2x2 mi=64x64x16 splitk=8 red=compute decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 2881.9010234776938},
    {8192, 8192, 8192, 1, "tile=128x256x64 cluster=2x1 mi=64x256x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 1485.434083255647},
    {8192, 8192, 8192, 1, "tile=192x128x64 cluster=1x2 mi=64x128x16 splitk=2 red=compute decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 1599.1648896468207},
    {8192, 8192, 8192, 1, "tile=192x256x64 cluster=2x2 mi=64x256x16 splitk=4 red=compute decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 2163.0729134821413},
    {8192, 8192, 8192, 1, "tile=256x192x64 cluster=1x1 mi=64x192x16 splitk=8 red=compute decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 2019.7361639524606},
    {1000, 1000, 1000, 3, "tile=64x64x64 cluster=2x1 mi=64x64x16 splitk=2 red=compute decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 32.262606773275643},
    {1000, 1000, 1000, 3, "tile=64x192x64 cluster=1x2 mi=64x192x16 splitk=4 red=compute decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 38.902620078488596},
    {1000, 1000, 1000, 3, "tile=128x64x64 cluster=2x2 mi=64x64x16 splitk=8 red=compute decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 65.087315851974822},
    {1000, 1000, 1000, 3, "tile=128x256x64 cluster=2x1 mi=64x256x16 splitk=1 red=none decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 18.483103234140984},
    {1000, 1000, 1000, 3, "tile=192x128x64 cluster=1x2 mi=64x128x16 splitk=2 red=compute decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 27.83762644117569},
    {1000, 1000, 1000, 3, "tile=192x256x64 cluster=2x2 mi=64x256x16 splitk=4 red=compute decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 40.814707831129482},
    {1000, 1000, 1000, 3, "tile=256x192x64 cluster=1x1 mi=64x192x16 splitk=8 red=compute decomp=dp skgrid=0 stages=0 family=0 variant=0 occ=1 group=1 raster=auto xcd=rr ws=0 hrank=-1", 63.290701337923338}
};
// clang-format on

ModelScalars pinned_scalars() {
  ModelScalars scalars = scalars_from_array({1, 23.162566883431943, 0.89986432241102965, 2.6270179881981273, 5.8408760422482278, 0.31703158152562533, 0.69294451410830504, 0.36363697665927719, 1.1000000000000001, 0.3059186954322709, 1.0712153281083956, 0.90655297456559414, 0.42775085744227437, 0.21455348995815171, 1.0});
  scalars.variant_efficiency = {0.97722529483915521, 0.97081886614499791, 0.97809372331320543, 0.96801541406752611, 1.007659114925654, 1.0058855281432761, 1.0056329160723767, 1.0143240220467433};
  return scalars;
}

TEST(GemmModelPin, HopperPredictionsAreUnchangedByRefactors) {
  auto spec = hw::find_hardware("h200");
  ASSERT_TRUE(spec.is_ok()) << spec.status().to_string();
  auto device = device_params_from_spec(spec.value());
  ASSERT_TRUE(device.is_ok()) << device.status().to_string();
  const auto model = make_model(device.value(), pinned_scalars());
  for (const PinnedPrediction& pin : kPinned) {
    GemmProblem problem;
    problem.m = pin.m;
    problem.n = pin.n;
    problem.k = pin.k;
    problem.batch = pin.batch;
    auto candidate = parse_candidate(pin.candidate);
    ASSERT_TRUE(candidate.is_ok()) << candidate.status().to_string();
    const double predicted_us = model->predict_us(problem, model->prepare(problem_class(problem), candidate.value()));
    // Every digit, so a deliberate model change can update its rows from this output.
    EXPECT_EQ(predicted_us, pin.predicted_us)
        << problem.describe() << " " << pin.candidate << " predicted_us=" << std::setprecision(17) << predicted_us;
  }
}

}  // namespace
}  // namespace parity::gemm

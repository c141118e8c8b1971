// The collectives Purlin runs natively: DESIGN §1's table, one line each. Everything else
// (flags, staging, pulls) is derived from these declarations, and the protocol facts SNAC
// relies on are pinned below so that editing a line here cannot silently change the protocol.
#pragma once

#include "layout/collective.h"
#include "layout/layout.h"

namespace purlin::layout {

// clang-format off
struct AllGather      : Collective<ConsumeOp::copy,   Packed,     Scattered> {};
struct AllGatherV     : Collective<ConsumeOp::copy,   PackedV,    ScatteredV> {};
struct ReduceScatter  : Collective<ConsumeOp::reduce, Scattered,  Packed> {};
struct ReduceScatterV : Collective<ConsumeOp::reduce, ScatteredV, PackedV> {};
struct AllToAll       : Collective<ConsumeOp::copy,   Scattered,  Transposed> {};
struct AllToAllV      : Collective<ConsumeOp::copy,   ScatteredV, TransposedV> {};
struct Scatter        : Collective<ConsumeOp::copy,   Scattered,  Packed, Root::producer> {};
struct Gather         : Collective<ConsumeOp::copy,   Packed,     Scattered, Root::consumer> {};
struct AllReduce      : compose<ReduceScatter, AllGather> {};
struct Broadcast      : compose<Scatter, AllGather> {};
struct Reduce         : compose<ReduceScatter, Gather> {};
// clang-format on

// Notify (DESIGN §2): a packed input notifies every peer, a scattered input only the owner of
// each partition; gathering to a root notifies the root only.
static_assert(AllGather::notify == Notify::every_peer);
static_assert(AllGatherV::notify == Notify::every_peer);
static_assert(Gather::notify == Notify::root);
static_assert(ReduceScatter::notify == Notify::partition_owner);
static_assert(ReduceScatterV::notify == Notify::partition_owner);
static_assert(AllToAll::notify == Notify::partition_owner);
static_assert(AllToAllV::notify == Notify::partition_owner);
static_assert(Scatter::notify == Notify::partition_owner);

// Consume: a packed output reduces over all ranks, scattered/transposed outputs copy per peer.
static_assert(ReduceScatter::consume == Consume::reduce_all_ranks);
static_assert(ReduceScatterV::consume == Consume::reduce_all_ranks);
static_assert(AllGather::consume == Consume::copy_each_peer);
static_assert(AllToAll::consume == Consume::copy_each_peer);
static_assert(Gather::consume == Consume::copy_each_peer);
static_assert(Scatter::consume == Consume::copy_from_root);

// Compositions: the intermediate is a packed partition per rank; root roles carry over.
static_assert(std::is_same_v<AllReduce::Intermediate, Packed>);
static_assert(std::is_same_v<Broadcast::Intermediate, Packed>);
static_assert(std::is_same_v<Reduce::Intermediate, Packed>);
static_assert(std::is_same_v<AllReduce::Input, Scattered> &&
              std::is_same_v<AllReduce::Output, Scattered>);
static_assert(std::is_same_v<Broadcast::Input, Scattered> &&
              std::is_same_v<Broadcast::Output, Scattered>);
static_assert(std::is_same_v<Reduce::Input, Scattered> && std::is_same_v<Reduce::Output, Scattered>);
static_assert(AllReduce::root_role == Root::none && AllReduce::role_groups == 3);
static_assert(Broadcast::root_role == Root::producer && !Broadcast::reduces);
static_assert(Reduce::root_role == Root::consumer && Reduce::reduces);

// One hop (compose::one_hop_source): AllReduce reduces partition k of every rank, Broadcast
// copies the root's partition k, Reduce reduces every rank's partition k into the root; output
// region k always reads input partition k, which one_hop_notifies relies on.
static_assert(AllReduce::one_hop_source(2, 1, 0).rank == kAllRanks &&
              AllReduce::one_hop_source(2, 1, 0).partition == 1);
static_assert(Broadcast::one_hop_source(2, 1, 3).rank == 3 &&
              Broadcast::one_hop_source(2, 1, 3).partition == 1);
static_assert(Reduce::one_hop_source(3, 1, 3).rank == kAllRanks &&
              Reduce::one_hop_source(3, 1, 3).partition == 1);
static_assert(AllReduce::one_hop_notifies(0, 2, 3, 0) && Broadcast::one_hop_notifies(1, 2, 3, 1) &&
              !Broadcast::one_hop_notifies(0, 2, 3, 1) && Reduce::one_hop_notifies(0, 2, 1, 1) &&
              !Reduce::one_hop_notifies(0, 2, 3, 1));

// Which NCCL entry points take a reduction op follows from the declarations, too.
static_assert(AllReduce::reduces && ReduceScatter::reduces && !AllGather::reduces &&
              !AllToAll::reduces && !Scatter::reduces && !Gather::reduces);

}  // namespace purlin::layout

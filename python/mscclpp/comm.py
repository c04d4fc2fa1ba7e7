# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
"""CommGroup: a bootstrapped group of ranks with helpers that connect every pair and build semaphores and
channels over torch, cupy or numpy buffers."""

from __future__ import annotations

from ._mscclpp import (
    Communicator,
    Connection,
    EndpointConfig,
    MemoryChannel,
    PortChannel,
    ProxyService,
    RegisteredMemory,
    Semaphore,
    TcpBootstrap,
    Transport,
    TransportFlags,
)
from .utils import buffer_info


def _is_torch_group(group):
    return type(group).__module__.startswith("torch") or type(group).__name__ == "ProcessGroup"


class CommGroup:
    """Rank 0 makes the bootstrap's unique id and the group hands it to the others: through `mpi_comm` (an
    mpi4py communicator, or a torch.distributed process group), or the ranks meet at `interfaceIpPortTrio`
    ("ip:port" or "if:ip:port"), with `rank` and `size` given (or taken from `mpi_comm`)."""

    def __init__(self, mpi_comm=None, interfaceIpPortTrio: str = "", rank: int = None, size: int = None):
        if interfaceIpPortTrio:
            if mpi_comm is not None and rank is None:
                rank, size = self._rank_and_size(mpi_comm)
            if rank is None or size is None or not (0 <= rank < size):
                raise ValueError("CommGroup over an ip:port needs a rank and a size with 0 <= rank < size")
            self.bootstrap = TcpBootstrap.create(rank, size)
            self.bootstrap.initialize(interfaceIpPortTrio)
        elif mpi_comm is not None:
            rank, size = self._rank_and_size(mpi_comm)
            self.bootstrap = TcpBootstrap.create(rank, size)
            unique_id = TcpBootstrap.create_unique_id() if rank == 0 else None
            self.bootstrap.initialize(self._broadcast(mpi_comm, unique_id))
        else:
            raise ValueError("CommGroup needs an mpi4py communicator, a torch.distributed group or an ip:port")
        self.communicator = Communicator(self.bootstrap)
        self.my_rank = self.bootstrap.get_rank()
        self.nranks = self.bootstrap.get_n_ranks()
        self.nranks_per_node = self.bootstrap.get_n_ranks_per_node()

    @staticmethod
    def _rank_and_size(group):
        if _is_torch_group(group):
            import torch.distributed as dist

            return dist.get_rank(group), dist.get_world_size(group)
        return group.rank, group.size

    @staticmethod
    def _broadcast(group, unique_id):
        if _is_torch_group(group):
            import torch.distributed as dist

            holder = [unique_id]
            dist.broadcast_object_list(holder, src=dist.get_global_rank(group, 0), group=group)
            return holder[0]
        return group.bcast(unique_id, 0)

    def barrier(self):
        self.bootstrap.barrier()

    def send(self, tensor, peer: int, tag: int):
        ptr, nbytes, _ = buffer_info(tensor)
        self.bootstrap.send(ptr, nbytes, peer, tag)

    def recv(self, tensor, peer: int, tag: int):
        ptr, nbytes, _ = buffer_info(tensor)
        self.bootstrap.recv(ptr, nbytes, peer, tag)

    def my_ib_device(self, local_rank: int) -> Transport:
        if not 0 <= local_rank < 8:
            raise ValueError("there are IB transports for local ranks 0 to 7 only")
        return getattr(Transport, f"IB{local_rank}")

    def make_connection(self, all_ranks: list[int], endpoints, use_switch: bool = False) -> dict[int, Connection]:
        """Connects to every rank of `all_ranks` (leave this rank out unless a loopback is wanted), with one
        EndpointConfig (or Transport) for all, or a dict of them per rank."""
        if use_switch:
            raise NotImplementedError("switch (NVLS) connections are not supported by this build")

        def config_of(value):
            return EndpointConfig(value) if isinstance(value, Transport) else value

        futures = {}
        for rank in all_ranks:
            endpoint = endpoints[rank] if isinstance(endpoints, dict) else endpoints
            futures[rank] = self.communicator.connect(config_of(endpoint), rank)
        return {rank: future.get() for rank, future in futures.items()}

    def register_local_memory(self, tensor, connections: dict[int, Connection]) -> RegisteredMemory:
        transports = TransportFlags()
        for connection in connections.values():
            transports |= connection.transport()
        ptr, nbytes, _ = buffer_info(tensor)
        return self.communicator.register_memory(ptr, nbytes, transports)

    def _exchange(self, memory: RegisteredMemory, connections: dict[int, Connection]) -> dict[int, RegisteredMemory]:
        memories = {self.my_rank: memory}
        futures = {}
        for rank in connections:
            self.communicator.send_memory(memory, rank)
            futures[rank] = self.communicator.recv_memory(rank)
        memories.update({rank: future.get() for rank, future in futures.items()})
        return memories

    def register_tensor_with_connections(self, tensor, connections: dict[int, Connection]
                                         ) -> dict[int, RegisteredMemory]:
        """This rank's registration of `tensor` under its own rank, and every peer's under theirs."""
        return self._exchange(self.register_local_memory(tensor, connections), connections)

    def make_semaphores(self, connections: dict[int, Connection]) -> dict[int, Semaphore]:
        futures = {rank: self.communicator.build_semaphore(conn, rank) for rank, conn in connections.items()}
        return {rank: future.get() for rank, future in futures.items()}

    def make_memory_channels(self, tensor, connections: dict[int, Connection]) -> dict[int, MemoryChannel]:
        semaphores = self.make_semaphores(connections)
        memories = self.register_tensor_with_connections(tensor, connections)
        return {rank: MemoryChannel(semaphores[rank], memories[rank], memories[self.my_rank]) for rank in connections}

    def make_memory_channels_with_scratch(self, tensor, registeredScratchBuffer: RegisteredMemory,
                                          connections: dict[int, Connection]) -> dict[int, MemoryChannel]:
        """Channels that put into the peers' scratch buffers and read `tensor` locally; packets arrive in this
        rank's scratch buffer."""
        semaphores = self.make_semaphores(connections)
        scratches = self._exchange(registeredScratchBuffer, connections)
        ptr, nbytes, _ = buffer_info(tensor)
        local = self.communicator.register_memory(ptr, nbytes, TransportFlags())
        return {rank: MemoryChannel(semaphores[rank], scratches[rank], local, registeredScratchBuffer.data())
                for rank in connections}

    def make_port_channels(self, proxy_service: ProxyService, tensor, connections: dict[int, Connection]
                           ) -> dict[int, PortChannel]:
        semaphores = self.make_semaphores(connections)
        memories = self.register_tensor_with_connections(tensor, connections)
        memory_ids = {rank: proxy_service.add_memory(memory) for rank, memory in memories.items()}
        semaphore_ids = {rank: proxy_service.add_semaphore(semaphores[rank]) for rank in connections}
        return {rank: proxy_service.port_channel(semaphore_ids[rank], memory_ids[rank], memory_ids[self.my_rank])
                for rank in connections}

    def make_port_channels_with_scratch(self, proxy_service: ProxyService, tensor,
                                        registeredScratchBuffer: RegisteredMemory,
                                        connections: dict[int, Connection]) -> dict[int, PortChannel]:
        """Channels that put from `tensor` into the peers' scratch buffers."""
        local = self.register_local_memory(tensor, connections)
        semaphores = self.make_semaphores(connections)
        scratches = self._exchange(registeredScratchBuffer, connections)
        memory_ids = {rank: proxy_service.add_memory(scratches[rank]) for rank in connections}
        memory_ids[self.my_rank] = proxy_service.add_memory(local)
        semaphore_ids = {rank: proxy_service.add_semaphore(semaphores[rank]) for rank in connections}
        return {rank: proxy_service.port_channel(semaphore_ids[rank], memory_ids[rank], memory_ids[self.my_rank])
                for rank in connections}

    def register_semaphore_with_proxy(self, proxy_service: ProxyService, connections: dict[int, Connection]):
        semaphores = self.make_semaphores(connections)
        return {rank: proxy_service.base_port_channel(proxy_service.add_semaphore(semaphores[rank]))
                for rank in connections}

    def register_memory_with_proxy(self, proxy_service: ProxyService, tensor, connections: dict[int, Connection]
                                   ) -> dict[int, int]:
        memories = self.register_tensor_with_connections(tensor, connections)
        return {rank: proxy_service.add_memory(memory) for rank, memory in memories.items()}
